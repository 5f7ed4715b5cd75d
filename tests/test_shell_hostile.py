"""Scripts that made the shell reader (:mod:`kvlint.engines.shell`) quadratic (issue 19), read with the right
result: a word of many unresolved ``$A``, a command prefix of many assignments or wrappers, a word of many
redirections. The expected words follow from the shell's rules, not from kvlint's output; the growth of the CPU
time with the size is reported by ``bench/hostile.py`` (the ``sh_*`` cases), not asserted here."""

from __future__ import annotations

import pytest

from kvlint.engines.shell import Part, commands, lex

N = 80_000


def test_a_word_of_many_unresolved_variables() -> None:
    """``$A`` x 80,000 with A unknown (24 s before: each reference searched the whole word for ``${A``): the
    reference stays as written, braced as in a word of several pieces."""
    cmds = list(commands("vllm serve m --served-model-name " + "$A" * N, {}))
    assert len(cmds) == 1
    last = cmds[0][-1]
    assert last.text == "${A}" * N
    assert last.unresolved and not last.from_env


def test_a_word_of_unresolved_variables_keeps_the_braces_it_was_written_with() -> None:
    # a lone $NAME stays bare; a word holding "${NAME" (or another name it starts) braces it
    texts = [w.text for w in next(iter(commands("x $AB ${AB} $A${AB} $AB$A", {})))]
    assert texts == ["x", "$AB", "${AB}", "${A}${AB}", "${AB}${A}"]


def test_a_command_prefix_of_many_assignments_and_wrappers() -> None:
    """40,000 leading ``Vi=$B`` then 40,000 ``exec`` (39 s before: the rest of the command was copied for
    each word skipped): the command is what follows them, the assignments in its environment, not the shell's (bash:
    a prefix assignment holds for its command only; shell50 read it for the next command too)."""
    k = 40_000
    script = (
        "".join(f"V{i}=$B " for i in range(k)) + "exec " * k + "env " * k + "vllm serve m; vllm serve $V39999"
    )
    got = list(commands(script, {"B": "b"}))
    assert [[w.text for w in cmd] for cmd in got] == [["vllm", "serve", "m"], ["vllm", "serve", "$V39999"]]
    assert got[0].environ is not None and got[0].environ.get()[0]["V39999"] == "b"


def test_a_word_of_many_redirections() -> None:
    """``>&1`` x 80,000 written as one word: 80,000 redirections (each operator ends the word before it), each
    one literal piece, all dropped from the command."""
    script = "vllm serve m " + ">&1" * N + " --port 1"
    words = [t for t in lex(script) if not isinstance(t, str)]
    assert len(words) == 3 + N + 2
    assert all(w.parts == [Part("lit", ">&1", False)] for w in words[3 : 3 + N])
    assert [w.text for w in next(iter(commands(script, {})))] == ["vllm", "serve", "m", "--port", "1"]


def test_a_review_too_large_says_the_budget_it_ran_out_of() -> None:
    """``ReviewTooLarge`` reports the characters counted and the budget of the review that raised it (the
    KV001 message names both), whatever budget ``review_budget`` was given; outside a review nothing counts."""
    from kvlint.engines.shell import ReviewTooLarge, charge_command_text, review_budget

    charge_command_text(10**9)  # outside a review: no budget, no error
    with review_budget(command_chars=100):
        charge_command_text(60)
        with pytest.raises(ReviewTooLarge) as err:
            charge_command_text(70)
    assert (err.value.chars, err.value.limit) == (130, 100)


def test_many_shifts_after_a_set_of_many_words() -> None:
    """``set --`` of 40,000 words, then 39,998 ``shift`` (each copied the parameters left before): the last two
    are the engine's ``$@``, as bash leaves them (bench/hostile.py ``sh_shifts``)."""
    k = 40_000
    script = (
        "set -- " + " ".join(f"a{i}" for i in range(k)) + "\n" + "shift\n" * (k - 2) + 'vllm serve m "$@"'
    )
    got = [c for c in commands(script, {}) if c and c[0].text == "vllm"]
    assert [w.text for w in got[0]] == ["vllm", "serve", "m", f"a{k - 2}", f"a{k - 1}"]


def test_many_subshells_after_many_variables() -> None:
    """20,000 ``export aI=1; ( bI=2 )`` lines, then 20,000 nested ``(``: each subshell isolated saves the shell's
    variables, so at most a bounded number are (bench/hostile.py ``sh_subshells``); the first ones' assignments stay
    in them, as bash keeps them."""
    k = 20_000
    script = (
        "".join(f"export a{i}=1; ( b{i}=2 )\n" for i in range(k))
        + "( " * k
        + "vllm serve m $a7 $b3"
        + " )" * k
    )
    (engine,) = [c for c in commands(script, {}) if c and c[0].text == "vllm"]
    assert [w.text for w in engine] == ["vllm", "serve", "m", "1", "$b3"]
