"""The pipeline options of the admission webhook's request path (shared by the server and its workers)."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

__all__ = ["webhook_options"]


def webhook_options(base: Any = None, **overrides: Any) -> Any:
    """:class:`kvlint.pipeline.Options` for the request path: ``base`` (or defaults) with ``overrides``
    applied where Options has such a field, and always ``allow_hub=False`` (no network call while the
    API server waits) and ``allow_local_paths=False`` (a manifest's model path is never looked up on the
    server's own filesystem, only in the configured model directories). Unknown override names are ignored, so callers can pass ``exemptions_allowed``
    to pipelines that do not know it yet; :func:`exemptions_enforceable` tells whether it took effect."""
    from kvlint.options import Options

    opts = base if base is not None else Options(allow_hub=False)
    names = {f.name for f in fields(opts)}
    kw = {k: v for k, v in overrides.items() if k in names}
    kw["allow_hub"] = False
    if "allow_local_paths" in names:
        kw["allow_local_paths"] = False
    return replace(opts, **kw)
