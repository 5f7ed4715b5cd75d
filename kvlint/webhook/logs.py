"""Structured JSON logs for the webhook: one JSON object per line on standard error.

Each line has ``time`` (RFC 3339, UTC, milliseconds), ``level``, ``logger``, ``message`` and the fields
passed as ``extra={"fields": {...}}`` (review uid, kind, namespace, name, operation, dry_run, verdict,
rules, duration_ms...); exceptions add ``exception`` (the formatted traceback, for kvlint bugs only).
uvicorn's own loggers are routed through the same formatter.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from typing import Any, TextIO

LOGGER_NAME = "kvlint.webhook"

#: Characters ``json.dumps(..., ensure_ascii=False)`` writes as they are but that a log line must not hold raw:
#: the Unicode line breaks NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR (``str.splitlines`` and other readers
#: split the line there), DEL and the C1 controls (U+009B is a terminal's CSI), and lone surrogates (not
#: encodable in UTF-8: a strict stream fails the record). Each is written as its JSON ``\uXXXX`` escape,
#: which a JSON reader decodes to the same value.
_RAW_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def _escaped(m: re.Match[str]) -> str:
    """The JSON escape (``\\uXXXX``) of the one character ``m`` matched."""
    return f"\\u{ord(m.group()):04x}"


class JsonFormatter(logging.Formatter):
    """``logging.Formatter`` writing one JSON object per record (see the module docstring)."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as one JSON line: time (UTC, ms), level, logger, message, and any ``extra`` fields."""
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        out: dict[str, Any] = {
            "time": f"{ts}.{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        extra = getattr(record, "fields", None)
        if isinstance(extra, dict):
            out.update(extra)
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        line = json.dumps(out, default=str, ensure_ascii=False)
        return line if line.isascii() else _RAW_UNSAFE.sub(_escaped, line)


def configure_logging(level: str = "info", stream: TextIO | None = None) -> logging.Logger:
    """Send the webhook's and uvicorn's loggers to ``stream`` (default stderr) as JSON lines at
    ``level`` (``debug``/``info``/``warning``/``error``); returns the webhook logger. Idempotent."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter())
    lvl = getattr(logging, level.upper(), logging.INFO)
    for name in (LOGGER_NAME, "uvicorn", "uvicorn.error", "uvicorn.access"):
        lg = logging.getLogger(name)
        lg.handlers = [handler] if name in (LOGGER_NAME, "uvicorn") else []
        lg.propagate = name not in (LOGGER_NAME, "uvicorn")
        lg.setLevel(lvl)
    return logging.getLogger(LOGGER_NAME)


__all__ = ["LOGGER_NAME", "JsonFormatter", "configure_logging"]
