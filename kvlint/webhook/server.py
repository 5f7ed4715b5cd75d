"""Run the webhook app on uvicorn over TLS, with certificate reload and a draining shutdown.

uvicorn builds its ``SSLContext`` from ``ssl_certfile``/``ssl_keyfile`` in ``Config.load()``; kvlint loads
the config, then swaps in the context owned by a :class:`~kvlint.webhook.tls.CertReloader`, so a
rotated certificate reaches new handshakes without a restart.

Shutdown (SIGTERM from the kubelet): the pod is first marked not ready (``/readyz`` 503) and keeps
answering for ``drain_seconds`` while endpoints controllers and the API server stop sending to it; then
uvicorn stops accepting, lets in-flight reviews finish for up to ``graceful_seconds``, runs the lifespan
shutdown (background watchers stopped, worker pool released) and exits. A second signal skips the drain.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from typing import Any

from kvlint.webhook.tls import CertReloader


def make_reloader(
    cert_file: str,
    key_file: str,
    metrics: Any = None,
    logger: logging.Logger | None = None,
    interval: float = 10.0,
) -> CertReloader:
    """A :class:`CertReloader` that logs each reload and counts it in ``metrics.tls_reloads``.

    Raises ssl.SSLError / OSError when the initial certificate/key pair cannot be loaded.
    """
    log = logger or logging.getLogger("kvlint.webhook")

    def on_reload(ok: bool, error: str | None) -> None:
        if metrics is not None:
            metrics.tls_reloads.labels("ok" if ok else "failed").inc()
        if ok:
            log.info("TLS certificate reloaded", extra={"fields": {"cert_file": cert_file}})
        else:
            log.warning(
                "TLS certificate reload failed; keeping the current one", extra={"fields": {"error": error}}
            )

    return CertReloader(cert_file, key_file, interval=interval, on_reload=on_reload)


#: Default connection limits of the review listener (see :func:`build_server`).
DEFAULT_LIMIT_CONCURRENCY = 1000
#: Seconds an idle kept-alive connection of the review listener stays open: longer than the API server's
#: client keeps one idle (90 s: its webhook transport takes ``http.DefaultTransport``'s ``IdleConnTimeout``,
#: ``k8s.io/apimachinery`` ``pkg/util/net/http.go``, ``SetOldTransportDefaults``), so the API server closes
#: idle connections first. With 5 s the server closed them, and a review the API server sent on one as it was
#: being closed failed ("EOF"): client-go retries no POST, so ``failurePolicy`` decided (``Ignore``: admitted
#: unchecked; ``Fail``: refused).
DEFAULT_KEEP_ALIVE_SECONDS = 120
DEFAULT_HANDSHAKE_TIMEOUT_SECONDS = 5.0
DEFAULT_MAX_HEADER_BYTES = 64 * 1024


#: What the server, its fork server and the multiprocessing resource tracker hold themselves, beyond the bounds
#: the server enforces (:func:`memory_bound`): about 100 MiB together when idle (the server some 45 MB, the fork
#: server 45 MB, the tracker 13 MB), the server some 50 MB more after 20,000 reviews (docs/webhook.md,
#: "Performance and memory"). The chart's ``kvlint.memoryBound`` adds the same figure.
SERVER_ALLOWANCE_BYTES = 256 * 2**20

#: Where a container's memory limit is read (cgroup v2, then v1): the kernel's own files, never a path a request
#: names.
CGROUP_MEMORY_LIMIT_FILES = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


def memory_bound(
    settings: Any, max_connections: int, max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES
) -> int | None:
    """Bytes the webhook's processes may hold at once by what the server enforces, or None when the workers'
    memory is not capped (``settings.worker_memory_bytes`` None). The sum of: each worker at its address-space cap
    (``RLIMIT_AS``, which bounds its resident memory too) x ``settings.workers``; the request bodies held before a
    worker decodes them (``settings.body_buffer_bytes``); a header buffer of ``max_header_bytes`` for each of
    ``max_connections``; :data:`SERVER_ALLOWANCE_BYTES`. A container memory limit below it lets the kernel's OOM
    killer end the whole container (the kubelet sets ``memory.oom.group`` on cgroup v2 from Kubernetes 1.28)
    instead of one worker's allocation failing."""
    if not settings.worker_memory_bytes:
        return None
    return (
        settings.workers * settings.worker_memory_bytes
        + settings.body_buffer_bytes
        + max_connections * max_header_bytes
        + SERVER_ALLOWANCE_BYTES
    )


def container_memory_limit(paths: tuple[str, ...] = CGROUP_MEMORY_LIMIT_FILES) -> int | None:
    """The memory limit of the cgroup this process runs in, in bytes, from the first of ``paths`` that can be read
    (cgroup v2 ``memory.max``, v1 ``memory.limit_in_bytes``), or None: no such file, ``max`` (no limit), v1's
    page-rounded "no limit" (2^62 and above), or not a number. Never raises."""
    for path in paths:
        try:
            with open(path, encoding="ascii") as fh:
                text = fh.read(64).strip()
        except (OSError, ValueError):
            continue
        if not text.isdigit():
            return None
        value = int(text)
        return value if 0 < value < 2**62 else None
    return None


def memory_limit_warning(settings: Any, max_connections: int, limit: int | None) -> str | None:
    """The start-up warning when the container's memory ``limit`` (bytes; None: none) is below
    :func:`memory_bound`, naming both in MiB and the settings to change; None when it holds or cannot be
    compared."""
    bound = memory_bound(settings, max_connections)
    if limit is None or bound is None or limit >= bound:
        return None
    mib = 2**20
    return (
        f"the container's memory limit ({limit / mib:,.0f} MiB) is below what the webhook may hold at once "
        f"({-(-bound // mib):,} MiB: {settings.workers} workers x --worker-memory {settings.worker_memory_bytes / mib:,.0f} "
        f"MiB, {settings.body_buffer_bytes / mib:,.0f} MiB of request bodies, {max_connections:,} connections' headers "
        f"and {SERVER_ALLOWANCE_BYTES // mib} MiB for the server itself): past the limit the kernel's OOM killer ends "
        "the whole container, not the one worker, and the API server's failurePolicy decides every review until it is "
        "back; raise the limit, or lower --workers, --worker-memory, --max-request-bytes or --max-connections"
    )


def _check_uvicorn(config: Any, listener: str) -> None:
    """Log a warning when uvicorn's HTTP protocol lacks what kvlint's connection limits read
    (:func:`kvlint.webhook.protocol.missing_uvicorn_internals`): a uvicorn release that renamed them would
    otherwise turn the limits off without a word."""
    import uvicorn

    from kvlint.webhook.protocol import missing_uvicorn_internals

    missing = missing_uvicorn_internals(config)
    if missing:
        logging.getLogger("kvlint.webhook").warning(
            "uvicorn %s lacks what kvlint's connection limits read on the %s listener (%s): the header deadline, "
            "the pipelining cap or the eviction at --max-connections may do nothing",
            uvicorn.__version__,
            listener,
            ", ".join(missing),
            extra={"fields": {"uvicorn": uvicorn.__version__, "missing": missing}},
        )


def build_server(
    app: Any,
    reloader: CertReloader,
    *,
    host: str = "0.0.0.0",
    port: int = 8443,
    drain_seconds: float = 0.0,
    graceful_seconds: float = 10.0,
    limit_concurrency: int | None = DEFAULT_LIMIT_CONCURRENCY,
    header_timeout: float | None = None,
    keep_alive_seconds: int = DEFAULT_KEEP_ALIVE_SECONDS,
    handshake_timeout: float = DEFAULT_HANDSHAKE_TIMEOUT_SECONDS,
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES,
    write_timeout: float | None = None,
    max_pipelined: int | None = None,
) -> Any:
    """A loaded ``uvicorn.Server`` for ``app`` serving HTTPS with ``reloader.context``.

    Connection limits, so that no client can hold the listener: ``limit_concurrency`` (connections+tasks
    above it get HTTP 503 from uvicorn instead of queueing without bound), ``handshake_timeout`` (a TLS
    handshake not done in this many seconds is dropped; asyncio's default is 60; so is a TLS close, whose
    close_notify asyncio otherwise awaits from the client for 30 s, holding the connection's slot), ``header_timeout`` and
    ``max_header_bytes`` (:func:`kvlint.webhook.protocol.deadline_protocol`; default: the app's
    ``header_timeout_seconds`` setting), ``write_timeout`` (a connection whose writes stay paused this many
    seconds because the client reads nothing is aborted; default ``header_timeout``), ``max_pipelined``
    (requests queued behind the one being answered; one more aborts the connection; default
    :data:`kvlint.webhook.protocol.DEFAULT_MAX_PIPELINED`) and ``keep_alive_seconds`` (idle keep-alive
    connections are closed). The body deadline is the app's. Logging is left to :func:`kvlint.webhook.logs.configure_logging`.
    """
    import uvicorn

    from kvlint.webhook.protocol import DEFAULT_MAX_PIPELINED, deadline_protocol

    state = _find_state(app)
    if header_timeout is None:
        header_timeout = state.settings.header_timeout_seconds if state is not None else 5.0
    on_close = (
        (lambda reason: state.metrics.connections_closed.labels("review", reason).inc()) if state else None
    )
    on_evict = (
        (lambda what: state.metrics.connections_evicted.labels("review", what).inc()) if state else None
    )
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        ssl_certfile=reloader.cert_file,
        ssl_keyfile=reloader.key_file,
        log_config=None,
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=int(max(1, graceful_seconds)),
        limit_concurrency=limit_concurrency,
        timeout_keep_alive=keep_alive_seconds,
        server_header=False,
        proxy_headers=False,
        http=deadline_protocol(
            header_timeout,
            max_header_bytes,
            on_close,
            write_timeout=write_timeout,
            max_pipelined=DEFAULT_MAX_PIPELINED if max_pipelined is None else max_pipelined,
            on_evict=on_evict,
        ),
        ws="none",
    )
    config.load()
    _check_uvicorn(config, "review")
    config.ssl = reloader.context
    server_cls = _draining_server_class()
    server = server_cls(config)
    server.drain_seconds = drain_seconds
    server.handshake_timeout = handshake_timeout
    return server


#: The name of the probe listener's thread (:class:`ProbeServer`).
PROBE_THREAD = "kvlint-webhook-probes"


class _ProbeProcessLines(logging.Filter):
    """Drops uvicorn's "Started server process [pid]" and "Finished server process [pid]" when the probe
    listener's server logs them: each is logged by every ``uvicorn.Server`` that serves, and with the probe
    listener the pod's log said the process started, and finished, twice (one process). Its "Uvicorn running
    on ..." line, which names its own address, stays."""

    LINES = frozenset({"Started server process [%d]", "Finished server process [%d]"})

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.threadName == PROBE_THREAD and record.msg in self.LINES)


_PROBE_PROCESS_LINES = _ProbeProcessLines()


class ProbeServer:
    """The probe listener: plain HTTP ``/healthz``, ``/readyz``, ``/metrics`` on its own port, served by a
    uvicorn server in its own thread and event loop (:func:`kvlint.webhook.app.create_probe_app`), so that
    review traffic (slow clients, many connections, a busy review loop) cannot starve the kubelet's probes
    or Prometheus' scrapes. ``port=0`` picks a free port (read :attr:`port` after :meth:`start`).
    """

    def __init__(self, state: Any, host: str = "0.0.0.0", port: int = 8080) -> None:
        import uvicorn

        from kvlint.webhook.app import create_probe_app
        from kvlint.webhook.protocol import deadline_protocol

        self.host = host
        self.sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port))
        self.port: int = self.sock.getsockname()[1]
        config = uvicorn.Config(
            create_probe_app(state),
            host=host,
            port=self.port,
            log_config=None,
            access_log=False,
            lifespan="off",
            limit_concurrency=64,
            timeout_keep_alive=5,
            server_header=False,
            http=deadline_protocol(
                5.0,
                16 * 1024,
                on_close=lambda reason: state.metrics.connections_closed.labels("probe", reason).inc(),
                on_evict=lambda what: state.metrics.connections_evicted.labels("probe", what).inc(),
            ),
            ws="none",
        )
        config.load()
        _check_uvicorn(config, "probe")
        self.server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None
        logging.getLogger("uvicorn.error").addFilter(_PROBE_PROCESS_LINES)  # once: the same filter object

    def _run(self) -> None:
        asyncio.run(self.server.serve(sockets=[self.sock]))

    def start(self, timeout: float = 10.0) -> ProbeServer:
        """Serve in a daemon thread; returns once listening."""
        self._thread = threading.Thread(target=self._run, name=PROBE_THREAD, daemon=True)
        self._thread.start()
        deadline = threading.Event()
        waited = 0.0
        while not self.server.started and waited < timeout and self._thread.is_alive():
            deadline.wait(0.01)
            waited += 0.01
        return self

    def stop(self) -> None:
        """Stop serving and join the thread."""
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.sock.close()


def _draining_server_class() -> Any:
    import uvicorn

    class DrainingServer(uvicorn.Server):
        """uvicorn.Server whose first SIGTERM/SIGINT marks the app not ready and exits after a delay, and
        whose TLS listeners drop handshakes, and closes (the client's close_notify awaited), not done within
        ``handshake_timeout`` seconds."""

        drain_seconds: float = 0.0
        handshake_timeout: float = DEFAULT_HANDSHAKE_TIMEOUT_SECONDS

        async def startup(self, sockets: Any = None) -> None:
            # uvicorn calls loop.create_server(..., ssl=...) without ssl_handshake_timeout (asyncio: 60 s) or
            # ssl_shutdown_timeout (30 s: a connection the server closed, e.g. at the header deadline, stayed
            # counted against limit_concurrency until the client's close_notify, which a slowloris client
            # never sends); pass ours for the duration of the start-up only
            loop = asyncio.get_running_loop()
            original = loop.create_server
            timeout = self.handshake_timeout

            async def create_server(*args: Any, **kwargs: Any) -> Any:
                if kwargs.get("ssl") is not None:
                    kwargs.setdefault("ssl_handshake_timeout", timeout)
                    kwargs.setdefault("ssl_shutdown_timeout", timeout)
                return await original(*args, **kwargs)

            try:
                loop.create_server = create_server  # type: ignore[method-assign]
            except AttributeError:  # a loop class without instance attributes (uvloop): its default stays
                await super().startup(sockets=sockets)
                return
            try:
                await super().startup(sockets=sockets)
            finally:
                del loop.create_server

        async def shutdown(self, sockets: Any = None) -> None:
            # the reviews still running when the graceful shutdown time is over are cancelled, and the pool
            # then closed: a worker whose review is cancelled is not replaced any more (ReviewPool.stopping)
            state = _find_state(self.config.app)
            if state is not None and state.pool is not None:
                state.pool.stopping = True
            await super().shutdown(sockets=sockets)

        def handle_exit(self, sig: int, frame: Any) -> None:
            state = _find_state(self.config.app)
            if self.drain_seconds > 0 and state is not None and not state.draining and not self.should_exit:
                state.draining = True
                state.logger.info(
                    "draining before shutdown", extra={"fields": {"seconds": self.drain_seconds}}
                )
                timer = threading.Timer(self.drain_seconds, uvicorn.Server.handle_exit, (self, sig, frame))
                timer.daemon = True
                timer.start()
                return
            uvicorn.Server.handle_exit(self, sig, frame)

    return DrainingServer


def _find_state(app: Any) -> Any:
    return getattr(getattr(app, "state", None), "webhook", None)


def serve_forever(server: Any) -> None:
    """Run ``server`` in this (main) thread until a signal stops it."""
    server.run()


class ServerThread:
    """The webhook served from a background thread on a loopback port (tests, ``bench/webhook.py``).

    ``port=0`` picks a free port (read :attr:`port` after :meth:`start`). :meth:`start` returns once the
    lifespan start-up (warm-up) is done and the socket listens; raises RuntimeError if the server does
    not come up within ``timeout`` seconds. :meth:`stop` asks for a graceful exit and joins.
    """

    def __init__(
        self,
        app: Any,
        reloader: CertReloader,
        host: str = "127.0.0.1",
        port: int = 0,
        probe_port: int | None = None,
        **server_options: Any,
    ) -> None:
        self.app = app
        self.reloader = reloader
        self.host = host
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port))
        self.port: int = self.sock.getsockname()[1]
        self.server = build_server(
            app, reloader, host=host, port=self.port, graceful_seconds=2, **server_options
        )
        #: The probe listener (plain HTTP) when ``probe_port`` is given (0 picks a free port).
        self.probes: ProbeServer | None = (
            ProbeServer(_find_state(app), host, probe_port) if probe_port is not None else None
        )
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    @property
    def url(self) -> str:
        """``https://host:port``."""
        return f"https://{self.host}:{self.port}"

    def _run(self) -> None:
        try:
            asyncio.run(self.server.serve(sockets=[self.sock]))
        except BaseException as exc:  # reported by start()
            self._error = exc

    def start(self, timeout: float = 20.0) -> ServerThread:
        """Start serving; returns self when ready to accept connections."""
        self._thread = threading.Thread(target=self._run, name="kvlint-webhook-server", daemon=True)
        self._thread.start()
        waited = 0.0
        while not self.server.started:
            if not self._thread.is_alive():
                raise RuntimeError(f"webhook server did not start: {self._error!r}")
            if waited > timeout:
                raise RuntimeError(f"webhook server did not start within {timeout} s")
            threading.Event().wait(0.01)
            waited += 0.01
        if self.probes is not None:
            self.probes.start()
        return self

    @property
    def probe_url(self) -> str | None:
        """``http://host:port`` of the probe listener, or None without one."""
        return f"http://{self.host}:{self.probes.port}" if self.probes is not None else None

    def stop(self) -> None:
        """Graceful stop: uvicorn finishes in-flight requests, the lifespan shuts down."""
        if self.probes is not None:
            self.probes.stop()
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.sock.close()

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


__all__ = [
    "CGROUP_MEMORY_LIMIT_FILES",
    "SERVER_ALLOWANCE_BYTES",
    "ProbeServer",
    "ServerThread",
    "build_server",
    "container_memory_limit",
    "make_reloader",
    "memory_bound",
    "memory_limit_warning",
    "serve_forever",
]
