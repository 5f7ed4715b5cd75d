"""A pool of review worker processes with a hard, enforceable time budget per review.

Why processes: kvlint's pipeline is CPU-bound Python. In a thread it shares the event loop's GIL and
cannot be stopped, so one pathological manifest (a quadratic regex, an absurd loop bound) could hold a
worker for ever and, with a few such reviews, every worker. A worker *process* that overruns its budget
is killed (``SIGKILL``) and replaced; the event loop never runs the pipeline and stays free for probes
and other reviews.

:meth:`ReviewPool.review` takes an idle worker (waiting at most the review's remaining budget), sends it the
request body as it came (the worker decodes it, lints and writes the response) and waits for the answer within
what is left of the budget; :meth:`ReviewPool.lint` does the same with an object (the warm-up, an UPDATE's
``oldObject``). The idle worker taken is the one used
last (its memory and the pipeline's memo tables are warm); a worker coming back is handed straight to the
review that has waited longest, so no later review takes it first. Each wait is one future the review's task
awaits, resolved by the pipe's reader callback or by a timer at the deadline: no helper task and no
intermediate future, so a review costs the event loop as few passes as it can. On time-out the worker is
killed and a new one started from the warmed-up fork server (:mod:`kvlint.webhook._preload`);
:class:`BudgetExceeded` tells the caller which stage ran out (``queue``: no worker became free; ``lint``:
the pipeline was too slow). A worker that dies (a crash, its memory limit) raises :class:`WorkerFailed` and
is replaced too.

Workers are started with the ``forkserver`` method where the platform has it (Linux, macOS), else
``spawn``: never plain ``fork`` from the multi-threaded server process.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import logging
import multiprocessing
import os
import time
from dataclasses import fields
from typing import Any

from kvlint.webhook.answer import answer_review
from kvlint.webhook.worker import (
    FRAME_HEADER,
    LintOutcome,
    MalformedMessage,
    ReplyDiagnostic,
    checked_rows,
    decode_reply,
    frame_messages,
    worker_main,
)

__all__ = ["SUMMARY_SLACK", "BudgetExceeded", "ReviewPool", "WorkerFailed", "summary_limit"]


class BudgetExceeded(Exception):
    """The review's time budget ran out; ``stage`` is ``queue`` (waiting for a worker) or ``lint``."""

    def __init__(self, stage: str, seconds: float) -> None:
        super().__init__(
            f"no review worker became free within {seconds:g} s"
            if stage == "queue"
            else f"review not finished within {seconds:g} s"
        )
        self.stage = stage


class WorkerFailed(Exception):
    """The worker died or reported an exception while linting (the message says which)."""


def _context() -> Any:
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["kvlint.webhook._preload"])
        return ctx
    return multiprocessing.get_context("spawn")


def _options_token(options: Any) -> tuple[int, ...]:
    """Identity of each field of an Options: equal tokens mean the worker already has these options (the
    caller keeps the Options object alive, so no id is reused while it is compared)."""
    return tuple(id(getattr(options, f.name)) for f in fields(options))


#: What :meth:`_Frames.read` returns while the message is not all in.
_INCOMPLETE = object()
#: Largest frame the pipe's header can declare (a signed 4-byte length, as ``Connection.send_bytes`` writes it).
_MAX_FRAME = 0x7FFFFFFF


def _decoded(data: bytes | bytearray, max_summary: int | None = None) -> tuple[Any, ...]:
    """A worker's reply read from its bytes (never unpickled: :func:`~kvlint.webhook.worker.decode_reply`), or
    ``("malformed", -1, why)`` for bytes that are no reply (the worker is then replaced, the review answered as
    its failure is)."""
    try:
        return decode_reply(data, max_summary)
    except MalformedMessage as exc:
        return ("malformed", -1, str(exc))


#: Bytes of a review's summary that do not come from its body: the findings grouped by rule and severity (a few
#: hundred rules), the first ten errors' messages of 256 characters, the fixed words (``outcome``, ``reason``).
SUMMARY_SLACK = 64 * 1024


def summary_limit(body: bytes) -> int:
    """The most bytes the JSON part of a worker's ``answer`` to a review of ``body`` can have: its summary's
    strings (uid, kind, namespace, name, username, ...) are the body's, each once (JSON-escaped as the body has
    them or shorter), twice for room, and :data:`SUMMARY_SLACK` for the rest
    (:func:`~kvlint.webhook.answer.review_summary`). A reply past it is malformed, not decoded: the decoder
    builds about 25 times the JSON's size in objects, on the event loop."""
    return 2 * len(body) + SUMMARY_SLACK


#: Most bytes one read of a reply takes (``os.read`` allocates what it is asked for before it reads).
_READ_PIECE = 1 << 20


class _Frames:
    """The server's end of one worker's pipe, read and written without waiting (its descriptor is
    ``O_NONBLOCK``): the message being read, a piece at a time, and the bytes left to write.

    The bytes held of a reply are those that arrived, not the length its frame header declares (a worker that
    wrote a header of 2 GiB - 1 and stopped had the server allocate and zero 2 GiB on the header), and a header
    declaring more than ``max_size`` (the worker's address space, ``worker_memory_bytes``: no reply of it can be
    larger) is a malformed reply, read no further."""

    __slots__ = ("_head", "_body", "_size", "max_size", "outbox", "summary_limit")

    def __init__(self, max_size: int = _MAX_FRAME) -> None:
        #: the message being read: its frame header's bytes so far, then its body so far and its declared size
        self._head = b""
        self._body: bytearray | None = None
        self._size = 0
        self.max_size = max_size
        #: the review's :func:`summary_limit` (None: a ``lint``, not checked)
        self.summary_limit: int | None = None
        #: what is left to write (None: nothing)
        self.outbox: bytes | memoryview | None = None

    def start(self, data: bytes, summary_limit: int | None = None) -> None:
        """Forget any part of an earlier message read and take ``data`` to write (a new review), whose reply's
        summary may have ``summary_limit`` bytes (:func:`summary_limit`; None: not checked)."""
        self._head, self._body, self._size = b"", None, 0
        self.outbox = data
        self.summary_limit = summary_limit

    def read(self, fd: int) -> Any:
        """Read what ``fd`` holds of the message being read, without waiting: the reply
        (:func:`~kvlint.webhook.worker.decode_reply`; bytes it does not read: ``("malformed", -1, why)``) once
        its last byte is in, else :data:`_INCOMPLETE` (call again when ``fd`` is readable). A message that
        is in whole takes two reads, as :func:`~kvlint.webhook.worker.recv_message` does. Raises EOFError
        when the other end closed the pipe before a message, OSError when within one (or on a header kvlint
        never writes)."""
        while True:
            body = self._body
            if body is None:
                head = self._head
                try:
                    chunk = os.read(fd, 4 - len(head))
                except BlockingIOError:
                    return _INCOMPLETE
                if not chunk:
                    if head:
                        raise OSError("got end of file during message")
                    raise EOFError
                if head:
                    chunk = head + chunk
                    self._head = b""
                if len(chunk) < 4:
                    self._head = chunk
                    continue
                (size,) = FRAME_HEADER.unpack(chunk)
                if size < 0:  # Connection's header for 2 GiB and more: never sent by kvlint
                    raise OSError("unexpected message header on the review pipe")
                if size > self.max_size:
                    return (
                        "malformed",
                        -1,
                        f"a reply of {size:,} bytes declared, more than the worker's "
                        f"{self.max_size / 2**20:g} MiB can hold",
                    )
                try:
                    chunk = os.read(fd, min(size, _READ_PIECE))
                except BlockingIOError:
                    chunk = b""
                if len(chunk) == size:  # all in at once: the usual reply
                    return _decoded(chunk, self.summary_limit)
                self._body, self._size = bytearray(chunk), size
                continue
            if len(body) == self._size:
                self._body = None
                return _decoded(body, self.summary_limit)
            try:
                chunk = os.read(fd, min(self._size - len(body), _READ_PIECE))
            except BlockingIOError:
                return _INCOMPLETE
            if not chunk:
                raise OSError("got end of file during message")
            body += chunk

    def write(self, fd: int) -> bool:
        """Write what ``fd`` takes now of :attr:`outbox`, without waiting; True once all of it is written.
        Raises OSError when the pipe is closed (the worker died)."""
        data = self.outbox
        while data:
            try:
                n = os.write(fd, data)
            except BlockingIOError:
                self.outbox = data
                return False
            data = memoryview(data)[n:] if n < len(data) else None
        self.outbox = None
        return True


class _Worker:
    """One worker process and the server's end of its pipe.

    The server's end does not block (``O_NONBLOCK``; the worker's end, another socket of the pair, does): the
    event loop writes a review's messages and reads the reply a piece at a time, as the pipe takes and holds
    them (:class:`_Frames`), so no read or write waits for the worker. A blocking read
    of a reply waited for the worker to write each piece (a pipe holds ~200 KB; a reply of 5,000 findings is
    3.8 MB), and a blocking write of a review to a worker that does not read (stopped, or starved of CPU)
    held the event loop, and with it every connection, probes and budgets, until it read.
    """

    def __init__(self, ctx: Any, pipeline: Any, memory_limit: int | None) -> None:
        parent, child = ctx.Pipe(duplex=True)
        self.process = ctx.Process(
            target=worker_main,
            args=(child, pipeline, memory_limit, answer_review),
            name="kvlint-review",
            daemon=True,
        )
        self.process.start()
        child.close()
        os.set_blocking(parent.fileno(), False)
        self.conn = parent
        #: the review's messages left to write and the reply being read (no reply larger than the worker can hold)
        self.frames = _Frames(min(memory_limit, _MAX_FRAME) if memory_limit else _MAX_FRAME)
        self.options: Any = None
        #: the WebhookSettings object last sent (a ``review`` needs them; sent once)
        self.settings: Any = None
        self.token: tuple[int, ...] | None = None
        self.reviews = 0
        #: the reply read for a review whose request was cancelled just after (see ReviewPool._call)
        self.late_reply: Any = None
        #: the future of the review waiting for this worker's reply (None while idle: see ReviewPool._readable)
        self.waiter: asyncio.Future[Any] | None = None

    @property
    def pid(self) -> int | None:
        return self.process.pid

    def kill(self) -> None:
        """SIGKILL the process and close the pipe (does not wait)."""
        try:
            self.process.kill()
        except (OSError, ValueError, AttributeError):
            pass
        try:
            self.conn.close()
        except OSError:
            pass

    def reap(self, timeout: float = 5.0) -> None:
        """Wait for the (killed) process to end and release its resources."""
        try:
            self.process.join(timeout)
            self.process.close()
        except (OSError, ValueError):
            pass


class ReviewPool:
    """``size`` review worker processes (see the module docstring).

    Args:
        size: number of workers (reviews linted at once).
        pipeline: picklable ``(LoadResult, Options) -> CheckResult`` replacing ``run_documents`` (tests,
            benchmarks); it must be importable by name in the workers.
        memory_limit: address-space cap per worker in bytes (``RLIMIT_AS``), None for none.
        metrics: a :class:`~kvlint.webhook.metrics.WebhookMetrics` (restarts, busy workers) or None.
        logger: where worker restarts are logged.
    """

    def __init__(
        self,
        size: int,
        *,
        pipeline: Any = None,
        memory_limit: int | None = None,
        metrics: Any = None,
        logger: logging.Logger | None = None,
    ) -> None:
        if size < 1:
            raise ValueError(f"a review pool needs at least one worker, not {size}")
        self.size = size
        self.pipeline = pipeline
        self.memory_limit = memory_limit
        self.metrics = metrics
        self.logger = logger or logging.getLogger("kvlint.webhook")
        self._ctx = _context()
        #: idle workers, the one used last at the end (taken first: LIFO)
        self._idle: list[_Worker] = []
        #: reviews waiting for a worker, oldest first; each future gets a worker, or None at its deadline
        self._waiters: collections.deque[asyncio.Future[_Worker | None]] = collections.deque()
        self.started = False
        self._workers: set[_Worker] = set()
        self._seq = itertools.count(1)
        self._pending: set[asyncio.Task[Any]] = set()
        self.busy = 0
        self.restarts = 0
        self.closed = False
        #: the server is shutting down (set when uvicorn's shutdown starts, :mod:`kvlint.webhook.server`): a
        #: worker killed because its review was cancelled is not replaced (uvicorn cancels the reviews still
        #: running when its graceful shutdown time is over, just before the pool closes)
        self.stopping = False
        #: ``time.monotonic()`` since when no worker has been alive (None while one is).
        self.empty_since: float | None = None

    # -- lifecycle ---------------------------------------------------------------------------------

    def _spawn(self) -> _Worker:
        return _Worker(self._ctx, self.pipeline, self.memory_limit)

    async def start(self) -> None:
        """Start every worker (the first start also starts the fork server, which imports kvlint and lints
        the warm-up object: about a second); returns when all can take reviews."""
        loop = asyncio.get_running_loop()
        self.started = True
        if self.metrics is not None:
            self.metrics.track_pool(self)
        for _ in range(self.size):
            w = await loop.run_in_executor(None, self._spawn)
            self._workers.add(w)
            self._watch(w)
            self._release(w)
        self._set_busy()

    async def close(self) -> None:
        """Stop every worker (closing its pipe ends its loop; stragglers are killed)."""
        self.closed = True
        for task in list(self._pending):
            task.cancel()
        workers = list(self._workers)
        self._workers.clear()
        for w in workers:
            self._unwatch(w)
            try:
                w.conn.close()
            except OSError:
                pass
        loop = asyncio.get_running_loop()

        def stop_all() -> None:
            deadline = time.monotonic() + 2.0
            for w in workers:
                w.process.join(max(0.0, deadline - time.monotonic()))
                if w.process.exitcode is None:
                    w.kill()
                w.reap(2.0)

        await loop.run_in_executor(None, stop_all)

    @property
    def alive(self) -> int:
        """Workers started and not killed (idle or busy)."""
        return len(self._workers)

    @property
    def pids(self) -> list[int]:
        """Process ids of the current workers."""
        return [w.pid for w in self._workers if w.pid is not None]

    @property
    def idle(self) -> int:
        """Workers alive and waiting for a review."""
        return len(self._idle)

    @property
    def waiting(self) -> int:
        """Reviews waiting for a free worker."""
        return len(self._waiters)

    def _set_busy(self) -> None:
        """Track since when no worker is alive (the gauges are read at scrape time,
        :meth:`kvlint.webhook.metrics.WebhookMetrics.track_pool`)."""
        if self._workers:
            self.empty_since = None
        elif self.empty_since is None:
            self.empty_since = time.monotonic()

    def _watch(self, w: _Worker) -> None:
        """Watch the pipe of ``w`` for as long as it is in the pool, with one reader callback
        (:meth:`_readable`) that hands a reply to the review waiting for one (:meth:`_call`) and otherwise
        replaces the worker: a worker that dies while idle (SIGKILL, the kernel's OOM killer) closes its end,
        and is replaced at once instead of being handed the next review (which its dead pipe would fail,
        answered per the failure mode) and counted alive meanwhile. One registration for the worker's life:
        no reader is added and removed per review."""
        try:
            asyncio.get_running_loop().add_reader(w.conn.fileno(), self._readable, w)
        except (OSError, ValueError):  # the pipe is closed already
            pass

    def _readable(self, w: _Worker) -> None:
        """The pipe of ``w`` is readable: the reply of the review waiting on it (set on its future, one
        event-loop pass from the reply to the review), or, when no review waits, an end of file or a write
        out of turn (:meth:`_idle_readable`). A review whose future is settled already (its budget ran out,
        it was cancelled) puts the idle watch back itself; nothing is read meanwhile."""
        fut = w.waiter
        if fut is None:
            self._idle_readable(w)
            return
        if fut.done():
            return
        try:
            reply = w.frames.read(w.conn.fileno())
        except BaseException as exc:  # EOFError: the worker died
            fut.set_exception(exc)
            return
        if reply is not _INCOMPLETE:
            fut.set_result(reply)

    def _writable(self, w: _Worker) -> None:
        """The pipe of ``w`` takes more of the review's messages (:meth:`_call`): write them; stop watching
        once all are written or the pipe is closed (the review waiting then gets the OSError)."""
        try:
            done = w.frames.write(w.conn.fileno())
        except OSError as exc:
            w.frames.outbox = None
            done = True
            fut = w.waiter
            if fut is not None and not fut.done():
                fut.set_exception(exc)
        if done:
            self._unwrite(w)

    def _unwrite(self, w: _Worker) -> None:
        """Stop waiting to write to the pipe of ``w``."""
        try:
            asyncio.get_running_loop().remove_writer(w.conn.fileno())
        except (OSError, ValueError):
            pass

    def _unwatch(self, w: _Worker) -> None:
        """Stop watching the pipe of ``w`` (before it is closed: its descriptor number can be reused)."""
        try:
            asyncio.get_running_loop().remove_reader(w.conn.fileno())
        except (OSError, ValueError):
            pass
        if w.frames.outbox is not None:
            w.frames.outbox = None
            self._unwrite(w)

    def _idle_readable(self, w: _Worker) -> None:
        """The pipe of ``w`` became readable while no review waited on it: the worker died (end of file)
        or wrote out of turn. Either way it is replaced."""
        self._unwatch(w)
        if w not in self._workers:
            return
        try:
            self._idle.remove(w)
        except ValueError:  # handed to a review that has not run yet: it finds the worker replaced
            pass
        self._replace(w, "died")

    def _release(self, w: _Worker) -> None:
        """Give the idle worker ``w`` to the review that has waited longest, or keep it idle."""
        waiters = self._waiters
        while waiters:
            fut = waiters.popleft()
            if not fut.done():
                fut.set_result(w)
                return
        self._idle.append(w)

    async def _acquire(self, budget: float) -> _Worker:
        """An idle worker (the one used last), or the first to come back within ``budget`` seconds for a
        review that waits in its turn. Raises BudgetExceeded("queue") at the deadline. When the caller is
        cancelled after a worker was handed to it, the worker goes back to the pool (none is lost)."""
        if budget <= 0:  # nothing left to lint with: no worker is taken (it would be killed at once)
            raise BudgetExceeded("queue", budget)
        if self._idle:
            return self._idle.pop()
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[_Worker | None] = loop.create_future()
        self._waiters.append(fut)

        def expire() -> None:
            if not fut.done():
                fut.set_result(None)

        timer = loop.call_later(budget, expire)
        try:
            w = await fut
        except BaseException:  # cancelled (the request went away, the server stops)
            timer.cancel()
            handed = fut.result() if fut.done() and not fut.cancelled() else None
            if handed is not None:
                self._release(handed)  # handed over just before the cancellation: give it back
            else:
                fut.cancel()
                try:
                    self._waiters.remove(fut)
                except ValueError:
                    pass
            raise
        timer.cancel()
        if w is None:
            try:
                self._waiters.remove(fut)
            except ValueError:
                pass
            raise BudgetExceeded("queue", budget)
        return w

    def _replace(self, w: _Worker, reason: str) -> None:
        """Kill ``w`` and start a replacement in the background (counted and logged); nothing when ``w``
        was replaced already."""
        if w not in self._workers:
            return
        self._unwatch(w)
        w.kill()
        self._workers.discard(w)
        if self.stopping and reason == "cancelled":
            # shutting down: each review cancelled at the end of the graceful shutdown time started a worker
            # from the fork server just before the pool closed, counted and logged as a restart
            self.logger.info(
                "review worker stopped",
                extra={"fields": {"reason": reason, "pid": w.pid, "reviews": w.reviews}},
            )
            self._set_busy()
            return
        self.restarts += 1
        if self.metrics is not None:
            self.metrics.worker_restarts.labels(reason).inc()
        self.logger.warning(
            "review worker replaced", extra={"fields": {"reason": reason, "pid": w.pid, "reviews": w.reviews}}
        )
        if self.closed:
            return
        loop = asyncio.get_running_loop()

        async def respawn() -> None:
            await loop.run_in_executor(None, w.reap)
            while not self.closed:
                try:
                    nw = await loop.run_in_executor(None, self._spawn)
                except Exception as exc:  # fork server gone, out of processes: retry shortly
                    self.logger.error("cannot start a review worker", extra={"fields": {"error": repr(exc)}})
                    await asyncio.sleep(1.0)
                    continue
                if self.closed:
                    nw.kill()
                    return
                self._workers.add(nw)
                self._watch(nw)
                self._release(nw)
                self._set_busy()
                return

        task = loop.create_task(respawn())
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)
        self._set_busy()

    # -- reviews -----------------------------------------------------------------------------------

    async def lint(self, obj: dict[str, Any], label: str, options: Any, budget: float) -> LintOutcome:
        """Lint ``obj`` (named ``label``) with ``options`` in a worker, within ``budget`` seconds in all
        (waiting for a free worker included).

        Raises:
            BudgetExceeded: the budget ran out (the worker, if any, was killed and is being replaced).
            WorkerFailed: the pipeline raised (message ``Type: text``) or the worker died.
        """
        reply = await self._exchange(("lint", 0, obj, label), None, options, budget, _LINT_REPLIES)
        rows, suppressed = checked_rows(reply[2]), reply[3]
        if rows is None or type(suppressed) is not int:
            raise WorkerFailed("malformed reply from the review worker (its findings)")
        return LintOutcome([ReplyDiagnostic(*row) for row in rows], suppressed)

    async def review(self, body: bytes, settings: Any, options: Any, budget: float) -> tuple[Any, ...]:
        """Answer the ``POST /validate`` request ``body`` in a worker (:func:`~kvlint.webhook.answer.answer_review`:
        decoded, exemptions, linted with ``options``, the response written there), within ``budget`` seconds in
        all (waiting for a free worker included). Returns the worker's reply: ``("answer", seq, response_bytes,
        summary)``, ``("bad", seq, status, message)`` or ``("update", seq, rows, suppressed)``.

        Raises:
            BudgetExceeded: the budget ran out (the worker, if any, was killed and is being replaced).
            WorkerFailed: the review raised in the worker (message ``Type: text``) or the worker died.
        """
        return await self._exchange(("review", 0, body), settings, options, budget, _REVIEW_REPLIES)

    async def review_old(
        self, body: bytes, rows: Any, suppressed: int, settings: Any, options: Any, budget: float
    ) -> tuple[Any, ...]:
        """Answer the UPDATE ``body`` whose review replied ``("update", seq, rows, suppressed, ...)``: a worker
        decodes it again and lints its ``oldObject`` (:func:`~kvlint.webhook.answer.answer_review` with ``old``),
        within ``budget`` seconds in all. Returns ``("answer", seq, response_bytes, summary)``; raises as
        :meth:`review`."""
        return await self._exchange(
            ("old", 0, body, rows, suppressed), settings, options, budget, _ANSWER_REPLIES
        )

    async def _exchange(
        self, message: tuple[Any, ...], settings: Any, options: Any, budget: float, expected: frozenset[str]
    ) -> tuple[Any, ...]:
        """Send ``message`` (its ``seq``, the second item, replaced) to an idle worker, with the options and
        settings it does not have yet, and return its reply of the same ``seq``, one of the ``expected`` kinds,
        within ``budget`` seconds in all; an ``("error", ...)`` reply raises WorkerFailed, and so does any other
        (the worker is then replaced) (see :meth:`lint`)."""
        assert self.started, "start() the pool first"
        loop = asyncio.get_running_loop()
        deadline = loop.time() + budget
        w = await self._acquire(budget)
        while w not in self._workers:  # it died after it was handed over (and is being replaced): another
            w = await self._acquire(deadline - loop.time())
        self.busy += 1
        keep = True
        try:
            seq = next(self._seq)
            messages: list[tuple[Any, ...]] = []
            # the same (frozen) Options object the worker was sent has the same fields: no token to build
            token = w.token if options is w.options and w.token is not None else _options_token(options)
            if token != w.token:
                messages.append(("options", options))
            if settings is not None and settings is not w.settings:
                messages.append(("settings", settings))
            messages.append((message[0], seq, *message[2:]))
            try:
                reply = await self._call(w, messages, max(0.0, deadline - loop.time()))
            except _CallTimeout:
                keep = False
                self._replace(w, "timeout")
                raise BudgetExceeded("lint", budget) from None
            except (EOFError, OSError) as exc:
                keep = False
                self._replace(w, "died")
                raise WorkerFailed(f"review worker died ({type(exc).__name__})") from None
            except asyncio.CancelledError:  # the request went away mid-review
                late, w.late_reply = w.late_reply, None
                if (
                    late is not None and late[0] in _DONE_REPLIES and late[1] == seq
                ):  # answered just before: idle
                    w.options, w.token = options, token
                    if settings is not None:
                        w.settings = settings
                    w.reviews += 1
                else:  # the worker is still busy with it
                    keep = False
                    self._replace(w, "cancelled")
                raise
            w.options, w.token = options, token
            if settings is not None:
                w.settings = settings
            w.reviews += 1
            if reply[1] == seq and reply[0] in expected:
                return reply  # type: ignore[no-any-return]
            if (
                reply[0] == "malformed"
            ):  # bytes that are no reply: a kvlint bug, or a worker running other code
                keep = False
                self._replace(w, "protocol")
                raise WorkerFailed(f"malformed reply from the review worker ({reply[2]})")
            if reply[0] == "error" and reply[1] == seq:
                if str(reply[2]).startswith("MemoryError"):
                    keep = False
                    self._replace(w, "memory")
                raise WorkerFailed(str(reply[2]))
            keep = False
            self._replace(w, "protocol")
            raise WorkerFailed("review worker answered out of turn")
        finally:
            self.busy -= 1
            if keep and w in self._workers:
                self._release(w)

    async def _call(self, w: _Worker, messages: list[tuple[Any, ...]], timeout: float) -> Any:
        """Send ``messages`` to ``w`` and wait at most ``timeout`` seconds for its one reply.

        The messages go out as the pipe takes them (what it does not take at once is written by a writer
        callback, :meth:`_writable`, as the worker reads), and the reply is read by the pipe's reader callback
        (:meth:`_readable`), a piece at a time, and set on the future this review awaits (one event-loop pass
        from the reply's last piece to the review): the event loop never waits for the worker, so the
        deadline holds even for a worker that stopped reading or writing. Raises _CallTimeout at the deadline,
        EOFError/OSError when the worker died. When the review is cancelled after the whole reply was read,
        the reply is kept in ``w.late_reply`` (the worker is idle again) and the cancellation goes on.
        """
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[Any] = loop.create_future()

        def expire() -> None:
            if not fut.done():
                fut.set_exception(_CallTimeout())

        fd = w.conn.fileno()  # OSError once the pipe is closed
        last = messages[-1]
        w.frames.start(
            frame_messages(messages), summary_limit(last[2]) if last[0] in ("review", "old") else None
        )
        if not w.frames.write(fd):  # OSError: the worker died
            loop.add_writer(fd, self._writable, w)
        w.waiter = fut
        timer = loop.call_later(timeout, expire)
        try:
            return await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled() and fut.exception() is None:
                w.late_reply = fut.result()
            raise
        finally:
            timer.cancel()
            w.waiter = None  # the idle watch again (a replaced worker's pipe is not watched)
            if w.frames.outbox is not None:  # not all written (the deadline, the worker died): no more
                w.frames.outbox = None
                self._unwrite(w)


#: The replies a worker ends a review with (:mod:`kvlint.webhook.worker`): to a ``lint`` message, ``ok``;
#: to a ``review``, :data:`_REVIEW_REPLIES`; to either, ``error``.
_LINT_REPLIES = frozenset({"ok"})
_REVIEW_REPLIES = frozenset({"answer", "bad", "update"})
_ANSWER_REPLIES = frozenset({"answer"})
_DONE_REPLIES = frozenset({"ok", "error"}) | _REVIEW_REPLIES


class _CallTimeout(Exception):
    """The worker did not answer within the review's budget."""
