"""kvlint as a validating admission webhook (``kvlint webhook serve``).

The same pipeline as ``kvlint check`` (:func:`kvlint.pipeline.run_documents`) answers
``admission.k8s.io/v1`` AdmissionReviews over HTTPS. Modules:

* :mod:`kvlint.webhook.review`: AdmissionReview parsing, what is exempt, verdicts, responses (no web
  framework);
* :mod:`kvlint.webhook.app`: the Starlette apps (``/validate``, ``/healthz``, ``/readyz``, ``/metrics``; the
  probe listener's);
* :mod:`kvlint.webhook.pool` and :mod:`kvlint.webhook.worker`: the review worker processes and their
  enforced time budget; :mod:`kvlint.webhook.answer`: a review answered in its worker from the request body;
* :mod:`kvlint.webhook.server` and :mod:`kvlint.webhook.protocol`: uvicorn with TLS reload, draining
  shutdown, connection limits and header deadlines, and the probe listener;
* :mod:`kvlint.webhook.tls`, :mod:`kvlint.webhook.metrics`, :mod:`kvlint.webhook.logs`;
* :mod:`kvlint.webhook.cli`: the ``webhook`` click group.

Importing this package (and :mod:`kvlint.webhook.cli`) needs none of the server libraries, so
``kvlint --help`` stays fast and lists the command even without them; serving needs the ``webhook``
extra: ``pip install 'kvlint-k8s[webhook]'`` (starlette, uvicorn, prometheus_client).
"""

from __future__ import annotations

import importlib.util

#: Distribution names the server needs, by import name.
SERVER_DEPS = {"starlette": "starlette", "uvicorn": "uvicorn", "prometheus_client": "prometheus_client"}

INSTALL_HINT = "pip install 'kvlint-k8s[webhook]'"


def install_hint(package_dir: str | None = None) -> str:
    """The command that installs the webhook extra into the kvlint that runs: ``pip install -e 'DIR[webhook]'``
    when kvlint is imported from a source checkout (``DIR/kvlint`` beside a ``pyproject.toml`` naming the
    ``kvlint-k8s`` project: an editable install or a clone on ``PYTHONPATH``, where installing the released
    distribution would put a second kvlint beside the one that runs; ``.`` when DIR is the working directory),
    else :data:`INSTALL_HINT` (the distribution from PyPI). ``package_dir``: the ``kvlint`` package's directory
    (default: the one imported). Never raises."""
    import os
    import re
    import shlex

    # (this file is kvlint/webhook/__init__.py: the package is two levels up, the checkout three)
    pkg = package_dir or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    root = os.path.dirname(os.path.abspath(pkg))
    try:
        with open(os.path.join(root, "pyproject.toml"), encoding="utf-8") as fh:
            project = re.search(r'^name\s*=\s*"kvlint-k8s"\s*$', fh.read(65536), re.M)
    except (OSError, UnicodeDecodeError):
        project = None
    if project is None:
        return INSTALL_HINT
    try:
        here = os.path.samefile(root, os.getcwd())
    except OSError:
        here = False
    where = "this" if here else "that"
    return (
        f"pip install -e {shlex.quote(('.' if here else root) + '[webhook]')} (kvlint runs from {where} source "
        "checkout, not from an installed release)"
    )


def missing_server_deps() -> list[str]:
    """Import names of the server libraries that are not installed (empty when all are)."""
    return [name for name in SERVER_DEPS if importlib.util.find_spec(name) is None]


class MissingDependencies(ImportError):
    """The webhook server libraries are not installed; the message names them and the install command."""


def require_server_deps() -> None:
    """Raise :class:`MissingDependencies` naming what is missing and ``pip install 'kvlint-k8s[webhook]'``."""
    missing = missing_server_deps()
    if missing:
        raise MissingDependencies(
            f"the admission webhook needs {', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} "
            f"not installed: {install_hint()}"
        )


__all__ = [
    "INSTALL_HINT",
    "MissingDependencies",
    "SERVER_DEPS",
    "install_hint",
    "missing_server_deps",
    "require_server_deps",
]
