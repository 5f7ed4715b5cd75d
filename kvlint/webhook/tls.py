"""TLS for the webhook: a server ``SSLContext`` whose certificate is reloaded when its files change.

cert-manager renews the serving certificate by updating the Secret; the kubelet then swaps the mounted
files (an atomic ``..data`` symlink switch). :class:`CertReloader` polls the (symlink-followed) files'
``(mtime_ns, size, inode)`` and, on a change, loads the new pair into a *new* ``SSLContext``; the context
the server was given picks, for each new handshake, the newest context that loaded
(``SSLContext.sni_callback``, called on every ClientHello, with or without SNI), so new connections get
the new certificate with no restart and open connections are untouched. A pair that fails to load (e.g.
the certificate written before its key, or the key before the certificate) is logged, the old certificate
stays in service, and the next poll retries.

The pair is never loaded into a context in use: OpenSSL frees a context's private key when a certificate
it does not match is set, so a failed load into the served context (new certificate, old key) left it
with no key and every handshake failed ("no shared cipher") until the next good reload; and even a good
load let a handshake begun between the certificate and the key (the GIL is released around each) start
with the new certificate and no key.
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
    """Owns the server context for ``cert_file``/``key_file`` and reloads the pair when they change.

    :attr:`context` is the context to serve with (it hands each new handshake the newest pair loaded,
    see the module docstring). ``on_reload(ok, error)`` is called after each reload attempt (``error``
    None on success).
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
        #: the context whose pair new handshakes get (:attr:`context` until a reload)
        self.current = self.context
        self.context.sni_callback = self._select
        self.reloads = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _select(self, sslobj: ssl.SSLObject, server_name: str | None, ctx: ssl.SSLContext) -> None:
        """The served context's SNI callback: the handshake goes on with :attr:`current`'s pair."""
        current = self.current
        if current is not ctx:
            sslobj.context = current

    def check(self) -> bool:
        """Load the pair into a new context, served to new handshakes, if either file changed since the last
        successful load; a pair that does not load leaves the served one as it is."""
        sig = _signature(self.cert_file, self.key_file)
        if sig == self._sig:
            return False
        try:
            fresh = server_context(self.cert_file, self.key_file)
        except (OSError, ssl.SSLError) as exc:
            if self.on_reload:
                self.on_reload(False, f"{type(exc).__name__}: {exc}")
            return False
        self.current = fresh  # one reference swap: a handshake sees the old pair or the new one
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
