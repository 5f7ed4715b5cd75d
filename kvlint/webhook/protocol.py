"""Connection-level limits for the webhook's HTTPS listener: a deadline and a size cap on request headers.

uvicorn closes idle keep-alive connections (``timeout_keep_alive``) but sets no deadline on a request's
*headers*: a client that connects and sends a header byte now and then (slowloris) holds its connection,
and with enough of them every request, probes included, got HTTP 503 ("Exceeded concurrency limit").
:func:`deadline_protocol` returns a subclass of uvicorn's HTTP protocol class that

* closes a connection whose request headers are not complete ``header_timeout`` seconds after the
  connection was made (TLS handshake done) or after its previous response;
* closes a connection whose pending request headers exceed ``max_header_bytes`` (httptools sets no limit),
  including those of a request pipelined behind one still being answered, and aborts one whose trailer section
  (after a chunked body) does, which is not kept (uvicorn added each trailer field to the request's headers);
* aborts a connection with more than ``max_pipelined`` requests waiting behind the one being answered:
  uvicorn's httptools protocol parses every request a read holds and queues those behind the one in flight
  without bound, and lets reading go on after each response while the queue is not empty; a client that
  sent ``GET /healthz`` 250 at a time (8.5 KB per write, under the header cap) faster than they were
  answered had 15,800 requests queued per connection, 38 MB of server memory for 0.56 MB sent (20 such
  connections: 767 MB);
* aborts a connection whose writes stay paused (the transport's buffer above its high-water mark, the
  client reading nothing) for ``write_timeout`` seconds: without it a client that sent requests and never
  read the answers held its connection, its task and up to ~600 KB of buffers (asyncio's 512 KB TLS and
  64 KB socket high-water marks) for ever, since no other deadline runs while a response is being written;
  as many of them as ``limit_concurrency`` would have held every connection of the listener;
* at ``limit_concurrency`` (``--max-connections``) connections or requests being answered, closes, for a request
  whose headers are complete, the connections still waiting for theirs (those that waited longest first), then
  idle kept-alive ones (those idle longest first), then those whose request *body* is still coming in (those whose
  body began first), until the request fits (``evicted``; httptools only): uvicorn refuses a request with HTTP 503
  while the connections, its own included, or the requests being answered are at the limit, and a client that
  kept that many connections open without finishing their headers, opening a new one as each was closed at the
  header deadline, held every slot for as long as it went on (on the probe listener, 64 connections failed the
  kubelet's liveness probe); one that sent its headers and then trickled a body held every slot for the body
  deadline, and as long as it reopened them. A body given way is one whose reading the application has not
  answered (no response begun, no request queued behind it); its request's task is taken out of uvicorn's count
  at once (it ends at its next step, its ``receive`` getting ``http.disconnect``). A connection whose request is
  all in and being answered, or whose answer is not all sent yet, is never closed for it. Each state is kept in
  the order connections entered it (:class:`_Room`), so an eviction looks at a bounded number of connections
  (:data:`EVICTION_SCAN_SLACK` more than it closes), not at all of them: listing and sorting every connection
  took 5.1 ms of CPU per request at the limit with 1,000 connections (0.11 ms now; load average 10);
* counts each in ``kvlint_webhook_connections_closed_total{listener, reason}`` (and each eviction by the state the
  connection was in, ``on_evict``), and (``max_connections``) each request
  uvicorn answers HTTP 503 and closes because the connections or requests at once reached its
  ``limit_concurrency`` (``--max-connections``; httptools only), which uvicorn only logs.

The body has its own deadline in the application (:func:`kvlint.webhook.app.create_app`), and the TLS
handshake its own (``ssl_handshake_timeout``, :func:`kvlint.webhook.server.build_server`).

The subclass overrides ``connection_made``, ``data_received``, ``connection_lost``, ``pause_writing`` and
``resume_writing`` and reads ``cycle``/``cycle.response_complete``, which both of uvicorn's HTTP/1.1
implementations (httptools and h11) have; the pipeline cap overrides httptools' ``on_headers_complete``
(h11 parses no request before the one in flight is answered, so it queues none).

It also hands uvicorn a :class:`CoalescingTransport`: uvicorn writes a response's status line and headers,
then its body, as two ``transport.write`` calls in the same step of the event loop; over TLS each became a
record of its own and a ``send`` of its own (and the client read two records). The writes of one step go out
together at the start of the next step, as one record: a request and its answer over asyncio's TLS on
loopback, client and server on one core, took 55 microseconds with the two writes and 36 with one.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Any

__all__ = [
    "DEFAULT_MAX_PIPELINED",
    "ANSWERING_SCOPE_KEY",
    "EVICTED_SCOPE_KEY",
    "EVICTION_SCAN_SLACK",
    "CoalescingTransport",
    "deadline_protocol",
    "missing_uvicorn_internals",
]


class CoalescingTransport:
    """A transport that joins the ``write`` calls made in one step of the event loop into one write to
    ``transport`` at the start of the next step (``loop.call_soon``), or at once before ``close``,
    ``write_eof``, ``writelines`` or ``set_protocol``. ``abort`` drops what is held, as the transport's own
    does with its buffer. Everything else (``is_closing``, ``get_extra_info``, ``pause_reading``, ...) is
    the wrapped transport's."""

    def __init__(self, transport: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: list[bytes] | None = None

    def write(self, data: bytes | bytearray | memoryview) -> None:
        """Hold ``data`` until the end of this step of the event loop."""
        if self._held is None:
            self._held = [bytes(data)]
            self._loop.call_soon(self.flush)
        else:
            self._held.append(bytes(data))

    def flush(self) -> None:
        """Write what is held (nothing when the transport is closing: it could not be sent)."""
        held, self._held = self._held, None
        if held and not self._transport.is_closing():
            self._transport.write(held[0] if len(held) == 1 else b"".join(held))

    def writelines(self, data: Any) -> None:
        self.flush()
        self._transport.writelines(data)

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def abort(self) -> None:
        self._held = None
        self._transport.abort()

    def set_protocol(self, protocol: Any) -> None:
        self.flush()
        self._transport.set_protocol(protocol)

    def get_write_buffer_size(self) -> int:
        return int(self._transport.get_write_buffer_size()) + sum(len(b) for b in self._held or ())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


#: The key set (True) in the ASGI ``scope`` of a request whose connection was closed while its body was coming in,
#: to make room at ``limit_concurrency``: the application then counts it as evicted, not as a client gone.
EVICTED_SCOPE_KEY = "kvlint.evicted"
#: Set (True) in a request's ASGI scope by the app while it reads a refused body to its end in order to answer
#: the review it names (:func:`kvlint.webhook.app._read_body`: the API server's review over
#: ``--max-request-bytes``): such a connection gives way to a complete request only after every other body, since
#: closing it fails a review the server is about to answer (the oldest body, it went first).
ANSWERING_SCOPE_KEY = "kvlint.answering"

#: Most requests a connection may have queued behind the one being answered (HTTP/1.1 pipelining). The API
#: server (Go's net/http) and the kubelet's probes never pipeline; a few allow a client that does.
DEFAULT_MAX_PIPELINED = 16


#: what the limits read of a uvicorn HTTP protocol instance (uvicorn 0.29 to 0.55): its server's connections and
#: tasks and its limit_concurrency (the eviction and the max_connections count), the request's cycle, its loop
#: and transport. Not part of uvicorn's API: an upgrade may rename any of them
UVICORN_ATTRIBUTES = ("connections", "tasks", "limit_concurrency", "cycle", "loop", "transport")
#: what the limits read or override of uvicorn's httptools protocol besides: the queue of pipelined requests, the
#: parser's and the response's callbacks (the last two start a request's task, which the eviction of a body takes
#: out of ``tasks``), and the server's state the eviction's :class:`_Room` is kept on
UVICORN_HTTPTOOLS_ATTRIBUTES = (
    "pipeline",
    "on_headers_complete",
    "on_response_complete",
    "server_state",
    "on_message_begin",
    "on_header",
)

#: Connections an eviction may look at beyond those it closes, in each state: those that may not go just now
#: (an answer still being sent, a request queued behind the body) are passed over and moved to the end of their
#: state's order, so that the next eviction does not look at them first again.
EVICTION_SCAN_SLACK = 32


class _Room:
    """The connections of one listener that may give way at ``limit_concurrency``, by state, each state in the
    order its connections entered it (``OrderedDict``: taking the first, or moving one to the end, is O(1)):
    ``headers`` waiting for their request's headers (entered when the header clock starts, so in deadline
    order), ``idle`` kept alive after an answer (entered when the answer is complete), ``bodies`` whose request
    body is being read (entered when the headers are complete). Kept on uvicorn's ``ServerState``, which every
    connection of one server shares."""

    __slots__ = ("bodies", "headers", "idle")

    def __init__(self) -> None:
        self.headers: OrderedDict[Any, None] = OrderedDict()
        self.idle: OrderedDict[Any, None] = OrderedDict()
        self.bodies: OrderedDict[Any, None] = OrderedDict()

    @staticmethod
    def of(server_state: Any) -> _Room:
        room = getattr(server_state, "_kv_room", None)
        if room is None:
            room = _Room()
            server_state._kv_room = room
        return room


class _TaskRecorder:
    """Stands for uvicorn's ``tasks`` set while a request's task is started, to learn which task it is."""

    __slots__ = ("added", "tasks")

    def __init__(self, tasks: set[Any]) -> None:
        self.tasks = tasks
        self.added: Any = None

    def add(self, task: Any) -> None:
        self.added = task
        self.tasks.add(task)

    def discard(self, task: Any) -> None:
        self.tasks.discard(task)

    def __len__(self) -> int:
        return len(self.tasks)


def missing_uvicorn_internals(config: Any) -> list[str]:
    """The names in :data:`UVICORN_ATTRIBUTES` (and :data:`UVICORN_HTTPTOOLS_ATTRIBUTES` for uvicorn's httptools
    protocol) that an instance of ``config``'s HTTP protocol class (a loaded ``uvicorn.Config``) lacks, a method
    kvlint overrides being looked for in uvicorn's classes, not in kvlint's: none with the uvicorn releases kvlint
    was tested with. Without them the header deadline, the pipelining cap, the
    eviction at ``limit_concurrency`` or its count silently do nothing (some are read with a default), so the
    server logs them as it starts (:func:`kvlint.webhook.server.build_server`)."""
    from uvicorn.server import ServerState

    cls = config.http_protocol_class
    loop = asyncio.new_event_loop()
    try:
        protocol = cls(config=config, server_state=ServerState(), app_state={}, _loop=loop)
    except TypeError as exc:  # another constructor
        return [f"__init__ ({exc})"]
    finally:
        loop.close()
    names: tuple[str, ...] = UVICORN_ATTRIBUTES
    if any(c.__name__ == "HttpToolsProtocol" for c in cls.__mro__):
        names += UVICORN_HTTPTOOLS_ATTRIBUTES
    # the methods kvlint overrides must be uvicorn's: the override itself would otherwise answer for one it renamed
    uvicorns = [c for c in cls.__mro__ if not c.__qualname__.startswith("deadline_protocol.")]
    return [
        name
        for name in names
        if not hasattr(protocol, name)
        or (callable(getattr(cls, name, None)) and not any(name in vars(c) for c in uvicorns))
    ]


class _TooManyPipelined(Exception):
    """Raised from the parser's callback to stop parsing a connection that was just aborted."""


def deadline_protocol(
    header_timeout: float,
    max_header_bytes: int = 64 * 1024,
    on_close: Any = None,
    base: Any = None,
    *,
    write_timeout: float | None = None,
    max_pipelined: int = DEFAULT_MAX_PIPELINED,
    on_evict: Any = None,
) -> type[asyncio.Protocol]:
    """A uvicorn HTTP protocol class enforcing the header deadline and size, the write deadline and the
    pipelining cap (see the module docstring).

    Args:
        header_timeout: seconds a request's headers may take (from connection or previous response).
        max_header_bytes: most bytes of a request's headers (request line included).
        on_close: called with ``"header_timeout"``, ``"header_too_large"``, ``"write_timeout"``,
            ``"pipelined"`` or ``"max_connections"`` when a connection is closed.
        base: the uvicorn protocol class to extend (default: uvicorn's ``auto`` choice, httptools when
            installed, else h11).
        write_timeout: seconds the transport may keep the connection's writes paused (the client not
            reading) before the connection is aborted; default ``header_timeout``.
        max_pipelined: most requests queued behind the one being answered; one more aborts the connection.
        on_evict: called with the state of each connection closed to make room at ``limit_concurrency``:
            ``"headers"`` (waiting for its request's headers), ``"idle"`` or ``"body"`` (its request body coming in).
    """
    write_deadline = header_timeout if write_timeout is None else write_timeout
    if base is None:
        from uvicorn.protocols.http.auto import AutoHTTPProtocol

        base = AutoHTTPProtocol

    class DeadlineHTTPProtocol(base):  # type: ignore[misc, valid-type]
        """uvicorn's HTTP protocol with a header deadline and header size cap."""

        #: the header deadline (event-loop time) of the request whose headers are awaited; None: none armed
        _kv_deadline: float | None = None
        #: the connection's one header timer and the time it is set for (see _kv_expired)
        _kv_timer: asyncio.TimerHandle | None = None
        _kv_timer_at = 0.0
        _kv_write_timer: asyncio.TimerHandle | None = None
        _kv_header_bytes = 0
        #: event-loop time the connection was made or its last answer complete, whichever is later
        _kv_idle_since = 0.0
        #: the listener's connections by state (:class:`_Room`), and the state this one is in (None: none that
        #: may give way)
        _kv_room: _Room | None = None
        _kv_state: OrderedDict[Any, None] | None = None
        #: the task of the request last started on this connection (httptools)
        _kv_task: Any = None
        #: a request's first bytes were parsed and its headers are not complete yet (httptools)
        _kv_begun = False
        #: bytes of the trailer section of the request's chunked body (httptools)
        _kv_trailer_bytes = 0

        def on_message_begin(self) -> None:
            self._kv_begun = True
            self._kv_trailer_bytes = 0
            super().on_message_begin()

        def on_header(self, name: bytes, value: bytes) -> None:
            if self._kv_begun:  # the request's own headers (their bytes are counted in data_received)
                super().on_header(name, value)
                return
            # httptools: a field of the trailer section after a chunked body. uvicorn appended each to the request's
            # headers, counted against no limit while the body deadline ran: one connection streaming trailer
            # lines took the server from 36 to 798 MB in 8 s. Not kept (nothing reads them) and capped as headers
            self._kv_trailer_bytes += len(name) + len(value) + 4
            if self._kv_trailer_bytes > max_header_bytes:
                self._kv_close("header_too_large", abort=True)
                raise _TooManyPipelined  # stops the parser: the rest of this read is not parsed

        def _kv_enter(self, state: OrderedDict[Any, None]) -> None:
            """Enter ``state`` (at the end of its order; a connection already in it stays where it is)."""
            if self._kv_state is not state:
                if self._kv_state is not None:
                    self._kv_state.pop(self, None)
                self._kv_state = state
                state[self] = None

        def _kv_leave(self) -> None:
            if self._kv_state is not None:
                self._kv_state.pop(self, None)
                self._kv_state = None

        def _kv_waiting(self) -> bool:
            cycle = getattr(self, "cycle", None)
            return cycle is None or bool(cycle.response_complete)

        def _kv_arm(self) -> None:
            """Start the header clock of the request whose bytes begin to arrive (a no-op while it runs)."""
            if self._kv_deadline is None:
                self._kv_deadline = deadline = self.loop.time() + header_timeout
                if self._kv_room is not None:
                    self._kv_enter(self._kv_room.headers)
                if self._kv_timer is None:
                    self._kv_timer = self.loop.call_at(deadline, self._kv_expired)
                    self._kv_timer_at = deadline

        def _kv_disarm(self) -> None:
            """Stop the header clock (the headers are complete). The timer is left to run out: when it fires
            with no deadline armed it does nothing, and with a later one it is set again for that one, so a
            kept-alive connection has one timer per header deadline rather than one made and cancelled per
            request."""
            self._kv_deadline = None

        def _kv_cancel(self) -> None:
            """Stop the header clock and cancel its timer (the connection closes)."""
            self._kv_deadline = None
            if self._kv_timer is not None:
                self._kv_timer.cancel()
                self._kv_timer = None

        def _kv_close(self, reason: str, abort: bool = False) -> None:
            """Close the connection (``abort``: at once, dropping what is buffered) and count it."""
            self._kv_cancel()
            self._kv_leave()
            self._kv_disarm_write()
            transport = getattr(self, "transport", None)
            if transport is not None and not transport.is_closing():
                # counted before the close: closing a TLS transport writes close_notify at once, and a client
                # (or a scrape) seeing the connection end must find it counted
                if on_close is not None:
                    on_close(reason)
                if abort:
                    transport.abort()
                else:
                    transport.close()

        def _kv_disarm_write(self) -> None:
            if self._kv_write_timer is not None:
                self._kv_write_timer.cancel()
                self._kv_write_timer = None

        def _kv_write_expired(self) -> None:
            self._kv_write_timer = None
            self._kv_close("write_timeout", abort=True)

        def pause_writing(self) -> None:
            super().pause_writing()
            if self._kv_write_timer is None:
                self._kv_write_timer = self.loop.call_later(write_deadline, self._kv_write_expired)

        def resume_writing(self) -> None:
            self._kv_disarm_write()
            super().resume_writing()

        def on_headers_complete(self) -> None:
            self._kv_begun = False
            # httptools: a request whose headers are complete while another is answered is queued
            pipeline = getattr(self, "pipeline", None)
            if pipeline is not None and len(pipeline) >= max_pipelined and not self._kv_waiting():
                pipeline.clear()  # the queued requests are never answered: their memory goes now
                self._kv_close("pipelined", abort=True)
                raise _TooManyPipelined  # stops the parser: the rest of this read is not parsed
            # uvicorn answers this request HTTP 503 and closes the connection when the connections or requests
            # at once reach limit_concurrency (its test in on_headers_complete, read before it runs); counted,
            # as uvicorn only logs it, so that a refusal the API server's failurePolicy decides shows in metrics
            limit = getattr(self, "limit_concurrency", None)
            if limit is not None and (len(self.connections) >= limit or len(self.tasks) >= limit):
                # connections still waiting for their headers, idle, or still sending their body give way to this
                # complete request (only bodies free a task: the requests being answered, whose tasks outlive a
                # connection its client closed, are never closed for it)
                self._kv_make_room(limit)
            if (
                on_close is not None
                and limit is not None
                and (len(self.connections) >= limit or len(self.tasks) >= limit)
            ):
                on_close("max_connections")
            self._kv_recording(super().on_headers_complete)

        def _kv_expired(self) -> None:
            self._kv_timer = None
            deadline = self._kv_deadline
            if deadline is None:  # the headers were complete in time
                return
            if deadline > self._kv_timer_at:  # a later request's clock, started after the timer was set
                self._kv_timer = self.loop.call_at(deadline, self._kv_expired)
                self._kv_timer_at = deadline
                return
            self._kv_deadline = None
            if self._kv_waiting():
                self._kv_close("header_timeout")

        def connection_made(self, transport: Any) -> None:
            super().connection_made(CoalescingTransport(transport, self.loop))
            self._kv_header_bytes = 0
            self._kv_idle_since = self.loop.time()
            server_state = getattr(self, "server_state", None)
            self._kv_room = _Room.of(server_state) if server_state is not None else None
            self._kv_arm()

        def on_response_complete(self) -> None:
            self._kv_idle_since = self.loop.time()
            self._kv_recording(super().on_response_complete)
            if self._kv_waiting() and self._kv_begun:
                # bytes of the next request came while this one was answered (parsed and held, its headers not
                # complete): its header clock starts now. It started with a request's first bytes, which had come
                # before, so such a connection was held as an idle one until the keep-alive timeout (120 s)
                self._kv_arm()
            elif self._kv_room is not None and self._kv_waiting() and self._kv_deadline is None:
                self._kv_enter(self._kv_room.idle)
                self._kv_room.idle.move_to_end(self)  # idle since now: last in the order
            elif self._kv_state is not None and self._kv_state is not getattr(self._kv_room, "headers", None):
                self._kv_leave()  # a request queued behind this answer is being answered now

        def _kv_recording(self, start: Any) -> None:
            """Call ``start`` (uvicorn's ``on_headers_complete``, or ``on_response_complete`` for a request queued
            behind the answer, the two methods that start a request's task) with a :class:`_TaskRecorder` in
            place of uvicorn's ``tasks``, to learn the task it starts (the eviction of a body takes it out of
            uvicorn's count). Not by overriding httptools' ``_start_asgi_task``: uvicorn 0.29 to 0.44 start the
            task inline in both, and no body gave way with them."""
            tasks: Any = getattr(self, "tasks")  # noqa: B009 (uvicorn's, untyped here)
            recorder = _TaskRecorder(tasks)
            setattr(self, "tasks", recorder)  # noqa: B010
            try:
                start()
            finally:
                setattr(self, "tasks", tasks)  # noqa: B010
            if recorder.added is not None:
                self._kv_task = recorder.added

        def _kv_sending(self) -> bool:
            """Whether bytes of an answer are still held (the :class:`CoalescingTransport` until the next step of
            the event loop, the transport while the client's socket is full, closing or not: an answer sent with
            ``Connection: close`` closes its transport, which sends them first): uvicorn marks a response
            complete once its last bytes are handed to the transport, and ``abort`` drops them."""
            transport = getattr(self, "transport", None)
            return transport is not None and transport.get_write_buffer_size() > 0

        def _kv_may_go(self, body: bool, answering: bool = False) -> bool:
            """Whether this connection may be closed to make room now: waiting for a request (headers or idle)
            with nothing of an answer still held, or (``body``) reading a request body that nothing has answered
            yet and behind which no request is queued, one the app reads to answer the review it names
            (:data:`ANSWERING_SCOPE_KEY`) when ``answering``, any other when not."""
            if not body:
                return self._kv_waiting() and not self._kv_sending()
            cycle = getattr(self, "cycle", None)
            task = self._kv_task
            scope = getattr(cycle, "scope", None)
            return (
                cycle is not None
                and (isinstance(scope, dict) and bool(scope.get(ANSWERING_SCOPE_KEY))) == answering
                and not cycle.response_complete
                and bool(getattr(cycle, "more_body", False))
                and not getattr(cycle, "response_started", True)
                and not getattr(self, "pipeline", True)
                and task is not None
                and not task.done()
            )

        def _kv_pick(
            self, state: OrderedDict[Any, None], want: int, body: bool, answering: bool = False
        ) -> list[Any]:
            """Up to ``want`` connections of ``state`` still counted in uvicorn's ``connections`` that may go
            (:meth:`_kv_may_go`), first in its order first,
            looking at no more than ``want`` + :data:`EVICTION_SCAN_SLACK` of them; those passed over go to the end."""
            picked: list[Any] = []
            passed: list[Any] = []
            if want <= 0:
                return picked
            budget = want + EVICTION_SCAN_SLACK
            # one out of uvicorn's count already frees nothing: one evicted whose close (connection_lost, a step
            # later) is not seen yet, its task having answered since (which entered it in ``idle`` again)
            connections = self.connections
            for other in state:
                if len(picked) >= want or budget <= 0:
                    break
                budget -= 1
                if other is not self and other in connections and other._kv_may_go(body, answering):
                    picked.append(other)
                elif other is not self:
                    passed.append(other)
            for other in passed:
                state.move_to_end(other)
            return picked

        def _kv_make_room(self, limit: int) -> None:
            """Close connections waiting for their request's headers, those that have waited longest first, then
            idle kept-alive ones, those idle longest first (not those made first: the API server keeps the
            connections it uses, which are thus the oldest), then those whose request body is still coming in,
            those whose body began first (a refused review's body the app reads to its end to answer it,
            :data:`ANSWERING_SCOPE_KEY`, after every other), until fewer than ``limit`` connections are open (this one included) and
            fewer than ``limit`` requests are being answered (only closing a body's connection takes a request's
            task off), so that this request, whose headers are complete, is answered rather than refused with
            HTTP 503. A connection whose request is all in and being answered, or whose answer is not all sent
            (:meth:`_kv_sending`), is never closed for it; when closing every connection that may go would not
            bring both counts under ``limit``, none is closed (the request gets the 503 either way). Looks at a
            bounded number of connections (:meth:`_kv_pick`), in the order each state keeps."""
            room = self._kv_room
            if room is None:
                return
            need_connections = len(self.connections) - limit + 1
            need_tasks = len(self.tasks) - limit + 1
            quiet = self._kv_pick(room.headers, need_connections, False)
            quiet += self._kv_pick(room.idle, need_connections - len(quiet), False)
            need_bodies = max(need_tasks, need_connections - len(quiet))
            bodies = self._kv_pick(room.bodies, need_bodies, True)
            if len(bodies) < need_bodies:  # then the bodies read to answer the review they name
                bodies += self._kv_pick(room.bodies, need_bodies - len(bodies), True, True)
            if len(bodies) < need_bodies:
                return  # closing all of them would leave a count at the limit: uvicorn refuses the request anyway
            del quiet[max(0, need_connections - len(bodies)) :]
            connections, tasks = self.connections, self.tasks
            victims = [(v, "headers" if v._kv_deadline is not None else "idle") for v in quiet]
            for victim, state in victims + [(v, "body") for v in bodies]:
                # out of the counts at once: uvicorn discards it again in connection_lost, which runs later, and
                # the task when it ends (its receive() gets http.disconnect at its next step)
                connections.discard(victim)
                if state == "body":
                    tasks.discard(victim._kv_task)
                    scope = getattr(victim.cycle, "scope", None)
                    if isinstance(scope, dict):
                        scope[EVICTED_SCOPE_KEY] = True
                victim._kv_cancel()
                victim._kv_disarm_write()
                victim._kv_leave()
                transport = getattr(victim, "transport", None)
                if transport is not None:
                    if not transport.is_closing():
                        if on_close is not None:
                            on_close("evicted")
                        if on_evict is not None:
                            on_evict(state)
                    transport.abort()

        def data_received(self, data: bytes) -> None:
            waiting = self._kv_waiting()
            if waiting:
                self._kv_arm()  # a new request begins: its headers are on the clock
            else:
                cycle = self.cycle
                if not getattr(cycle, "more_body", True):
                    # the request is all in and being answered: these bytes begin the next one (pipelined),
                    # which uvicorn parses at once and holds until its headers are complete; counted
                    # against the header cap, or a client could pile up headers while a review runs
                    self._kv_header_bytes += len(data)
                    if self._kv_header_bytes > max_header_bytes:
                        self._kv_close("header_too_large")
                        return
                    super().data_received(data)
                    if self.cycle is not cycle:  # the next request's headers are complete (queued)
                        self._kv_header_bytes = 0
                    return
            super().data_received(data)
            if not self._kv_waiting():  # headers complete: the request is being answered
                self._kv_disarm()
                self._kv_header_bytes = 0
                room = self._kv_room
                if room is not None:
                    if getattr(self.cycle, "more_body", False):
                        self._kv_enter(room.bodies)  # its body is coming in (entered once: the order is kept)
                    else:
                        self._kv_leave()
            elif waiting:
                self._kv_header_bytes += len(data)
                if self._kv_header_bytes > max_header_bytes:
                    self._kv_close("header_too_large")

        def connection_lost(self, exc: Exception | None) -> None:
            self._kv_cancel()
            self._kv_disarm_write()
            self._kv_leave()
            super().connection_lost(exc)

    return DeadlineHTTPProtocol
