"""Imported by the webhook's ``multiprocessing`` fork server before it forks review workers: imports the
pipeline and lints the warm-up object once, so every worker starts with kvlint's modules and catalogues
already loaded (and shares their memory pages with its siblings until it writes to them).

Then the objects alive are frozen (:func:`gc.freeze`, after one full collection): the workers inherit them
in the collector's permanent generation, which no collection scans. Without it a worker's full collection
walked every module, catalogue and memo table loaded here, about 10 ms in one process (21,000 tracked
objects) and 8 to 21 ms in ``bench/webhook.py`` on a shared core, paid by the review it interrupted; it
also wrote each object's header, copying the pages the workers otherwise share. Only what exists before
the first fork is frozen, once: the garbage of reviews is collected as usual (freezing per review kept
every cycle for ever; see :func:`kvlint.load._gc_paused`).
"""

from __future__ import annotations

import gc

import kvlint.webhook.answer  # noqa: F401  (a review's decoding and answer: each worker is handed it)
from kvlint.webhook.request_options import webhook_options
from kvlint.webhook.worker import warm_up

try:
    warm_up(webhook_options())
except Exception:  # pragma: no cover - a worker then loads what it needs on its first review
    pass
gc.collect()
gc.freeze()
