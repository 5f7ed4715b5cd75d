"""Imported by the webhook's ``multiprocessing`` fork server before it forks review workers: imports the
pipeline and lints the warm-up object once, so every worker starts with kvlint's modules and catalogues
already loaded (and shares their memory pages with its siblings until it writes to them)."""

from __future__ import annotations

from kvlint.webhook.request_options import webhook_options
from kvlint.webhook.worker import warm_up

try:
    warm_up(webhook_options())
except Exception:  # pragma: no cover - a worker then loads what it needs on its first review
    pass
