"""``kvlint verify``: read an engine's start-up log, replay kvlint's plan for the same settings and compare what
the engine printed with what kvlint predicts (:mod:`kvlint.verify.logparse`, :mod:`kvlint.verify.compare`), and
record the start-up as a ground-truth case (:mod:`kvlint.verify.record`)."""

from kvlint.verify.compare import Figure, VerifyError, VerifyResult, verify_log
from kvlint.verify.logparse import StartupLog, parse_log
from kvlint.verify.record import record_case

__all__ = ["Figure", "StartupLog", "VerifyError", "VerifyResult", "parse_log", "record_case", "verify_log"]
