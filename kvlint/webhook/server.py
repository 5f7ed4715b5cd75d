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


def build_server(
    app: Any,
    reloader: CertReloader,
    *,
    host: str = "0.0.0.0",
    port: int = 8443,
    drain_seconds: float = 0.0,
    graceful_seconds: float = 10.0,
    limit_concurrency: int | None = 512,
) -> Any:
    """A loaded ``uvicorn.Server`` for ``app`` serving HTTPS with ``reloader.context``.

    ``limit_concurrency``: connections+tasks above this get HTTP 503 from uvicorn instead of queueing
    without bound. Logging is left to :func:`kvlint.webhook.logs.configure_logging`.
    """
    import uvicorn

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
        server_header=False,
        proxy_headers=False,
    )
    config.load()
    config.ssl = reloader.context
    server_cls = _draining_server_class()
    server = server_cls(config)
    server.drain_seconds = drain_seconds
    return server


def _draining_server_class() -> Any:
    import uvicorn

    class DrainingServer(uvicorn.Server):
        """uvicorn.Server whose first SIGTERM/SIGINT marks the app not ready and exits after a delay."""

        drain_seconds: float = 0.0

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

    def __init__(self, app: Any, reloader: CertReloader, host: str = "127.0.0.1", port: int = 0) -> None:
        self.app = app
        self.reloader = reloader
        self.host = host
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port))
        self.port: int = self.sock.getsockname()[1]
        self.server = build_server(app, reloader, host=host, port=self.port, graceful_seconds=2)
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
        return self

    def stop(self) -> None:
        """Graceful stop: uvicorn finishes in-flight requests, the lifespan shuts down."""
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.sock.close()

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


__all__ = ["ServerThread", "build_server", "make_reloader", "serve_forever"]
