"""A review answered in its worker from the request body as it came (issue 19): decoded, the exemptions applied,
linted and the AdmissionReview response written there, so that the server's event loop neither decodes a body
nor pickles an object or its findings (:meth:`kvlint.webhook.pool.ReviewPool.review`). Run by the worker loop
(:func:`kvlint.webhook.worker.worker_main`, given :func:`answer_review` by the pool)."""

from __future__ import annotations

import json
from typing import Any

from kvlint.webhook.worker import LintOutcome, ReplyDiagnostic, lint_object, reply_rows

#: What the log line shows of an error's ``rule: message`` (``kvlint.webhook.review.MAX_WARNING_CHARS``, which a
#: test keeps equal: that module is imported by the worker only when it answers a review).
MAX_WARNING_CHARS = 256

#: ``json.dumps`` with the arguments of Starlette's ``JSONResponse.render``, its encoder made once (``dumps``
#: builds one per call when given arguments); the bytes of every JSON answer of ``POST /validate``.
encode_json = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode

#: How many errors' ``rule: message`` a review's summary carries for its log line; ``LOG_ERRORS`` of
#: :mod:`kvlint.webhook.app` is this constant (a log line keeps as many).
SUMMARY_MESSAGES = 10


def _grouped(diags: Any, messages: int, chars: int = 0) -> list[list[Any]]:
    """``diags`` as a summary carries them: ``[rule, severity, message, count]``, the first ``messages`` one by one
    with their message, in order, the others counted by rule and severity (message ``""``), in the order each
    first came, each counting findings (a capped finding the findings it stands for,
    :func:`kvlint.types.findings_stood_for`): what the server's metrics (a count by rule and severity) and log line (the first messages, the
    number of errors, the rules) read, in a reply that does not grow with the findings (5,000 warnings of one rule
    are one entry: the server decoded 5,000 of them). ``chars``: the messages cut to as many characters (0: whole)."""
    out: list[list[Any]] = []
    counted: dict[tuple[str, str], list[Any]] = {}
    from kvlint.types import findings_stood_for

    for i, d in enumerate(diags):
        if i < messages:
            out.append([d.rule, d.severity, d.message[:chars] if chars else d.message, findings_stood_for(d)])
            continue
        key = (d.rule, d.severity)
        entry = counted.get(key)
        if entry is None:
            entry = counted[key] = [d.rule, d.severity, "", 0]
            out.append(entry)
        entry[3] += findings_stood_for(d)
    return out


def review_summary(review: Any, verdict: Any) -> tuple[Any, ...]:
    """What the server's metrics and log line read of a review answered in a worker (:func:`answer_review`),
    as plain values: the request's ``api_version, uid, operation, kind, namespace, name, sub_resource,
    dry_run, username``, then the verdict's ``allowed, outcome, errors, warnings, suppressed, reason, old_object``
    (the findings :func:`_grouped`: the first :data:`SUMMARY_MESSAGES` errors with their message, cut to the
    ``MAX_WARNING_CHARS`` the log line shows of each, the others counted). Read back, its types checked, by :func:`kvlint.webhook.app.summary_review` into a Review and a
    Verdict."""
    return (
        review.api_version,
        review.uid,
        review.operation,
        review.kind,
        review.namespace,
        review.name,
        review.sub_resource,
        review.dry_run,
        review.username,
        verdict.allowed,
        verdict.outcome,
        # the log line shows each as at most MAX_WARNING_CHARS characters of "rule: message": the rest is not sent
        _grouped(verdict.errors, SUMMARY_MESSAGES, MAX_WARNING_CHARS),
        _grouped(verdict.warnings, 0),
        verdict.suppressed,
        verdict.reason,
        verdict.old_object,
    )


def answer_review(
    body: bytes,
    seq: int,
    settings: Any,
    options: Any,
    pipeline: Any = None,
    old: tuple[Any, ...] | None = None,
) -> tuple[Any, ...]:
    """A review answered from its request body, in the worker: what the server did before handing the object
    over (decoding the body, :func:`~kvlint.webhook.review.parse_review`; the exemptions,
    :func:`~kvlint.webhook.review.skip_reason`) and after (the verdict and the response,
    :func:`~kvlint.webhook.review.build_response`, written as JSON), so the server's event loop neither decodes
    a body (a 1.3 MB one held it 45 to 70 ms) nor pickles the object and the findings. The reply:

    * ``("answer", seq, response_bytes, summary)``: the AdmissionReview response's bytes and
      :func:`review_summary`;
    * ``("bad", seq, status, message)``: not an AdmissionReview (HTTP ``status``, as ``ReviewError``);
    * ``("update", seq, rows, suppressed, response_bytes, summary)``: an UPDATE whose new object has errors and
      whose ``oldObject`` must be linted for the errors it already had (``allow_existing_violations`` in
      ``enforce``): the new object's :func:`reply_rows`, and the answer should the old object's lint not finish
      (every error denying, as when the old object has none). The server then sends the body back with the
      rows (``old``: ``(rows, suppressed)``, a second exchange within what is left of the budget) and this
      lints the old object and answers ``("answer", ...)``; an old object's lint that runs out thus still
      leaves every error denying, and the server decodes neither body (it did, on its event loop, for every
      such UPDATE: one a hostile client could send at will).

    Raises what the pipeline raises (the worker loop answers ``("error", ...)``, the server then per the
    failure mode)."""
    from kvlint.webhook.review import (  # the request's decoding and answers: loaded in the fork server
        ReviewError,
        ReviewTooDeep,
        WebhookSettings,
        build_response,
        parse_review,
        prepared_object,
        review_label,
        skip_reason,
        skipped_response,
        too_deep_response,
    )

    if settings is None:  # no settings message yet (the pool sends them with a worker's first review)
        settings = WebhookSettings(options=options)
    try:
        review = parse_review(body)
    except ReviewError as exc:
        return ("bad", seq, exc.status, str(exc))
    except ReviewTooDeep as exc:
        payload, verdict = too_deep_response(exc.review, settings)
        return ("answer", seq, encode_json(payload).encode("utf-8"), review_summary(exc.review, verdict))
    del body
    if old is not None:
        return _answer_old(review, seq, settings, options, pipeline, old)
    try:
        why = skip_reason(review, settings)
    except RecursionError:  # too deep for comparing an UPDATE's objects: a finding, not an internal error
        payload, verdict = too_deep_response(review, settings)
        return ("answer", seq, encode_json(payload).encode("utf-8"), review_summary(review, verdict))
    if why is not None:
        payload, verdict = skipped_response(review, why)
        return ("answer", seq, encode_json(payload).encode("utf-8"), review_summary(review, verdict))
    try:
        result = lint_object(prepared_object(review), review_label(review), options, pipeline)
    except RecursionError:  # as when the server pickled the object for a worker: a finding, which fail-open
        # does not admit (an internal error is admitted under it)
        payload, verdict = too_deep_response(review, settings)
        return ("answer", seq, encode_json(payload).encode("utf-8"), review_summary(review, verdict))
    rows = reply_rows(result.diagnostics)
    suppressed = int(getattr(result, "suppressed", 0) or 0)
    del result
    if (
        settings.mode == "enforce"
        and settings.allow_existing_violations
        and review.operation == "UPDATE"
        and review.old_object is not None
        and any(row[1] == "error" for row in rows)
    ):
        outcome = LintOutcome([ReplyDiagnostic(*row) for row in rows], suppressed)
        payload, verdict = build_response(review, settings, outcome)
        return (
            "update",
            seq,
            rows,
            suppressed,
            encode_json(payload).encode("utf-8"),
            review_summary(review, verdict),
        )
    outcome = LintOutcome([ReplyDiagnostic(*row) for row in rows], suppressed)
    payload, verdict = build_response(review, settings, outcome)
    return ("answer", seq, encode_json(payload).encode("utf-8"), review_summary(review, verdict))


def _answer_old(
    review: Any, seq: int, settings: Any, options: Any, pipeline: Any, old: tuple[Any, ...]
) -> tuple[Any, ...]:
    """The answer of an UPDATE whose new object's findings are ``old`` (``(rows, suppressed)``, this review's
    ``("update", ...)`` reply) once its ``oldObject`` is linted as the new object was (same options, same
    label): its errors the old object already had sent as warnings (:func:`~kvlint.webhook.review.build_response`
    with :func:`~kvlint.webhook.review.existing_errors`), as the server did when it linted the old object."""
    from dataclasses import replace

    from kvlint.webhook.review import (
        build_response,
        existing_errors,
        prepared_object,
        review_label,
        too_deep_response,
    )

    rows, suppressed = old
    before = replace(review, object=review.old_object)
    try:
        result = lint_object(prepared_object(before), review_label(before), options, pipeline)
    except RecursionError:  # as when the server pickled the old object for a worker: a finding
        payload, verdict = too_deep_response(review, settings)
        return ("answer", seq, encode_json(payload).encode("utf-8"), review_summary(review, verdict))
    existing = existing_errors(LintOutcome([ReplyDiagnostic(*row) for row in reply_rows(result.diagnostics)]))
    del result
    outcome = LintOutcome([ReplyDiagnostic(*row) for row in rows], suppressed)
    payload, verdict = build_response(review, settings, outcome, existing)
    verdict.old_object = "linted"
    return ("answer", seq, encode_json(payload).encode("utf-8"), review_summary(review, verdict))


__all__ = ["SUMMARY_MESSAGES", "answer_review", "encode_json", "review_summary"]
