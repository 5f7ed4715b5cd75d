"""TLS for the webhook: a server ``SSLContext`` whose certificate is reloaded when its files change.

cert-manager renews the serving certificate by updating the Secret; the kubelet then swaps the mounted
files (an atomic ``..data`` symlink switch). :class:`CertReloader` polls the (symlink-followed) files'
``(mtime_ns, size, inode)`` and, on a change, loads the new pair into the *same* ``SSLContext``: OpenSSL
uses a context's current certificate for every new handshake, so new connections get the new
certificate with no restart and open connections are untouched. A pair that fails to load (e.g. key
written before the certificate) is logged, the old certificate stays in service, and the next poll
retries.
"""

from __future__ import annotations

import os
import ssl
import threading
from collections.abc import Callable

Signature = tuple[tuple[int, int, int], ...]


def _signature(*paths: str) -> Signature:
    out = []
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            out.append((-1, -1, -1))
            continue
        out.append((st.st_mtime_ns, st.st_size, st.st_ino))
    return tuple(out)


def server_context(cert_file: str, key_file: str) -> ssl.SSLContext:
    """A TLS server context (TLS 1.2 or newer) holding the PEM certificate chain and key.

    Raises:
        ssl.SSLError / OSError: unreadable files, or key and certificate do not match.
    """
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(cert_file, key_file)
    return ctx


class CertReloader:
    """Owns the server context for ``cert_file``/``key_file`` and reloads it when they change.

    ``on_reload(ok, error)`` is called after each reload attempt (``error`` None on success).
    :meth:`check` does one poll (returns True when a new certificate was loaded); :meth:`start` polls
    every ``interval`` seconds in a daemon thread until :meth:`stop`.

    Raises (constructor): ssl.SSLError / OSError when the initial pair cannot be loaded.
    """

    def __init__(
        self,
        cert_file: str,
        key_file: str,
        interval: float = 10.0,
        on_reload: Callable[[bool, str | None], None] | None = None,
    ) -> None:
        self.cert_file = cert_file
        self.key_file = key_file
        self.interval = interval
        self.on_reload = on_reload
        self._sig = _signature(cert_file, key_file)
        self.context = server_context(cert_file, key_file)
        self.reloads = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def check(self) -> bool:
        """Reload the pair into :attr:`context` if either file changed since the last successful load."""
        sig = _signature(self.cert_file, self.key_file)
        if sig == self._sig:
            return False
        try:
            self.context.load_cert_chain(self.cert_file, self.key_file)
        except (OSError, ssl.SSLError) as exc:
            if self.on_reload:
                self.on_reload(False, f"{type(exc).__name__}: {exc}")
            return False
        self._sig = sig
        self.reloads += 1
        if self.on_reload:
            self.on_reload(True, None)
        return True

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.check()
            except Exception as exc:  # never let the watcher die silently
                if self.on_reload:
                    self.on_reload(False, f"{type(exc).__name__}: {exc}")

    def start(self) -> None:
        """Start polling in a daemon thread (no-op when already started)."""
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="kvlint-cert-reload", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop polling and wait for the thread to end."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None


__all__ = ["CertReloader", "server_context"]
