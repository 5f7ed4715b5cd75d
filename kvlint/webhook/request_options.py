"""The pipeline options of the admission webhook's request path (shared by the server and its workers)."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

__all__ = ["MAX_REVIEW_SIZE", "webhook_options"]

#: The most pod templates, and containers in them, the webhook reviews in one object
#: (:attr:`kvlint.options.Options.max_review_size`); a larger object gets one KV001 error ("too large to
#: review"), denied in ``enforce`` mode, instead of a review that runs out of its budget and is admitted
#: unchecked (fail-open). A review costs about 0.8 ms of worker CPU a serving container (a Grove
#: PodCliqueSet of 1,000 cliques: 0.79 s on one core; 256: 0.2 s), and the largest object in the corpus and
#: the fixtures holds 8 containers in 4 pod templates (docs/webhook.md, "Request and connection limits").
MAX_REVIEW_SIZE = 256


def webhook_options(base: Any = None, **overrides: Any) -> Any:
    """:class:`kvlint.pipeline.Options` for the request path: ``base`` (or defaults) with ``overrides``
    applied where Options has such a field, and always ``allow_hub=False`` (no network call while the
    API server waits) and ``allow_local_paths=False`` (a manifest's model path is never looked up on the
    server's own filesystem, only in the configured model directories), and ``max_review_size``
    :data:`MAX_REVIEW_SIZE` unless ``base`` or ``overrides`` set it (an override of None lifts it: tests and
    benchmarks of the largest objects). Unknown override names are ignored, so callers can pass
    ``exemptions_allowed`` to pipelines that do not know it yet; :func:`exemptions_enforceable` tells whether
    it took effect."""
    from kvlint.options import Options

    opts = base if base is not None else Options(allow_hub=False)
    names = {f.name for f in fields(opts)}
    kw = {k: v for k, v in overrides.items() if k in names}
    kw["allow_hub"] = False
    if "allow_local_paths" in names:
        kw["allow_local_paths"] = False
    if "max_review_size" in names and "max_review_size" not in overrides and opts.max_review_size is None:
        kw["max_review_size"] = MAX_REVIEW_SIZE
    return replace(opts, **kw)
