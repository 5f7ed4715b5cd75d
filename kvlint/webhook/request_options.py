"""The pipeline options of the admission webhook's request path (shared by the server and its workers)."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

__all__ = [
    "MAX_REVIEW_SIZE",
    "MAX_REVIEW_SIZE_LIMIT",
    "MIN_REVIEW_SIZE",
    "check_review_size",
    "webhook_options",
]

#: The most pod templates, and containers in them, the webhook reviews in one object
#: (:attr:`kvlint.options.Options.max_review_size`); a larger object gets one KV001 error ("too large to
#: review"), denied in ``enforce`` mode, instead of a review that runs out of its budget and is admitted
#: unchecked (fail-open). A review costs about 0.8 ms of worker CPU a serving container (a Grove
#: PodCliqueSet of 1,000 cliques: 0.79 s on one core; 256: 0.2 s), and the largest object in the corpus and
#: the fixtures holds 8 containers in 4 pod templates (docs/webhook.md, "Request and connection limits").
MAX_REVIEW_SIZE = 256

#: The bounds of ``--max-review-size`` (the chart's ``maxReviewSize``), refused on start outside them. At least
#: one pod template. At most 4096: at 0.6 to 0.8 ms of worker CPU a serving container, a review at that cap
#: takes 2.5 to 3.3 s on an idle core, above the default 2 s budget already; a larger cap would no longer be
#: what decides the answer for a large object, the budget would (admitted unchecked under ``--failure-mode
#: open``), which is what the cap exists to prevent.
MIN_REVIEW_SIZE = 1
MAX_REVIEW_SIZE_LIMIT = 4096


def check_review_size(value: int | None) -> None:
    """Raise ValueError when ``value`` (a per-object cap on pod templates and containers) is outside
    :data:`MIN_REVIEW_SIZE` .. :data:`MAX_REVIEW_SIZE_LIMIT`; None (no cap: tests, benchmarks) passes."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"max review size must be an integer, not {value!r}")
    if not MIN_REVIEW_SIZE <= value <= MAX_REVIEW_SIZE_LIMIT:
        raise ValueError(
            f"max review size must be {MIN_REVIEW_SIZE} to {MAX_REVIEW_SIZE_LIMIT} pod templates or containers, "
            f"not {value}"
        )


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
