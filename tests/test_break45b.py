"""Adversarial pass on the readers merged in session 45 (branch break45b): each test fails before its fix."""

from __future__ import annotations

import re

from kvlint.verify import logparse, parse_log

_UNAVAILABLE = "FlashInfer top-p/top-k sampling unavailable: "
_PREFIX = "(EngineCore_DP0 pid=1) WARNING 06-16 14:13:27 [topk_topp_sampler.py:69] "


def test_sampler_patterns_hold_no_unbounded_run_before_a_literal() -> None:
    # ``unavailable: .*; falling back\.`` ran ``.*`` to the line's end and back from every occurrence of its head:
    # a 180,000-character line repeating the head cost 4,000 scans of the line (quadratic; a 64 MiB log line of
    # it would hold `verify` for hours). Counted structurally: no ``.*``/``.+`` in the sampler patterns, which are
    # tried on every log line naming a sampler.
    for pattern in (logparse._SAMPLER_FLASHINFER, logparse._SAMPLER_NATIVE):
        assert not re.search(r"\.[*+]", pattern.pattern), pattern.pattern


def test_repeated_fallback_head_is_read_once_and_right() -> None:
    hostile = _PREFIX + _UNAVAILABLE * 4_000
    assert logparse._sampler_choice(hostile) is None
    assert logparse._sampler_choice(hostile + "x; falling back.") is False
    # the tail before the head is not the head's tail
    assert logparse._sampler_choice(_PREFIX + "; falling back. " + _UNAVAILABLE + "no module") is None
    log = parse_log(
        hostile + "no module; falling back.\n" + _PREFIX + "Using FlashInfer for top-p & top-k sampling.\n"
    )
    assert (log.flashinfer_sampler, log.sampler_line) == (False, 1)
