"""Hostile input found by the break50 pass, each read with the right result (the CPU growth of the loops is
reported by ``bench/hostile.py``, not asserted here)."""

from __future__ import annotations

from kvlint.engines.shell import ARG_MAX, commands


def test_dollar_at_of_empty_parameters_is_charged_their_nul_bytes() -> None:
    """``set --`` of 40,000 empty parameters, then ``"$@"`` 100 times: each expansion passes 40,000 arguments,
    which ``execve(2)`` counts against ARG_MAX with their NUL bytes (40,000 bytes each time), so the script's
    budget affords ARG_MAX // 40,000 of them and the rest stay unexpanded. Before, an empty parameter cost
    nothing: every reference made 40,000 fields (1,000 references of a 128 KB script: 21 s, 354 MB)."""
    k, refs = 40_000, 100
    script = "set -- " + "'' " * k + "; " + ': "$@"; ' * refs + "vllm serve m"
    got = [cmd for cmd in commands(script, {}) if cmd and cmd[0].text == ":"]
    assert len(got) == refs
    expanded = [cmd for cmd in got if len(cmd) == k + 1]
    kept = [cmd for cmd in got if [w.text for w in cmd] == [":", "$@"] and cmd[1].unresolved]
    assert len(expanded) == ARG_MAX // k
    assert len(expanded) + len(kept) == refs
    assert all(w.text == "" for w in expanded[0][1:])


def test_dollar_at_past_the_budget_stays_unresolved_and_the_engine_after_it_is_read() -> None:
    """4,000 one-letter parameters referenced 10,000 times (the sum of their lengths was taken at each reference,
    the budget long spent: 4 s for 68 KB): the references the budget affords are expanded (each costs 8,000 bytes:
    4,000 letters and their NULs), the rest kept, and the engine command after them read."""
    k, refs = 4_000, 10_000
    script = "set -- " + "a " * k + "; " + ": $@; " * refs + "vllm serve m"
    got = list(commands(script, {}))
    assert [w.text for w in got[-1]] == ["vllm", "serve", "m"]
    expanded = sum(1 for cmd in got if cmd and cmd[0].text == ":" and len(cmd) == k + 1)
    assert expanded == ARG_MAX // (2 * k)
