"""Here-documents in ``sh -c`` scripts (POSIX 2.7.4): the body after ``<<WORD`` is the command's input, up to
the line that is WORD, and is not read as commands. A chat template or config file written with
``cat <<EOF`` once left kvlint reading its text as the script (an apostrophe in it swallowed the engine
command: "the shell script starts no engine directly"), or taking a ``vllm serve`` line of the body for the
engine."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kvlint.engines import shell as S
from kvlint.pipeline import Options, run_check


def _commands(script: str) -> list[list[str]]:
    return [[w.text for w in c] for c in S.commands(script, {}, [])]


@pytest.mark.parametrize(
    ("script", "want"),
    [
        # quoted delimiter, a body with quotes that are not shell
        (
            "cat > /t <<'EOF'\n{% if r == 'user' %}Don't{% endif %}\nEOF\nvllm serve m\n",
            ["vllm", "serve", "m"],
        ),
        # <<- strips leading tabs from the body's lines and the delimiter line
        ("cat <<-END >x\n\tvllm serve body\n\tEND\nvllm serve real", ["vllm", "serve", "real"]),
        # the delimiter as the next word, and a double-quoted one
        ('cat << "EOF"\nvllm serve body\nEOF\nvllm serve real', ["vllm", "serve", "real"]),
        # more commands on the operator's line; the body starts on the next line
        ("cat <<EOF; echo hi\nbody '\nEOF\nvllm serve real", ["vllm", "serve", "real"]),
        # two here-documents on one line: their bodies follow one another
        ("cat <<A <<B\na'\nA\nb\"\nB\nvllm serve real", ["vllm", "serve", "real"]),
        # the operator written against the command's word: ``<`` and ``>`` end a word (POSIX 2.3)
        ("cat<<EOF\nvllm serve body\nEOF\nvllm serve real", ["vllm", "serve", "real"]),
        (
            "cat>/tmp/t.jinja<<-'EOF'\n\t{% if r == 'user' %}Don't{% endif %}\n\tEOF\nvllm serve real",
            ["vllm", "serve", "real"],
        ),
    ],
)
def test_a_body_is_not_read_as_commands(script: str, want: list[str]) -> None:
    cmds = _commands(script)
    assert cmds[-1] == want
    assert not any(c[:3] == ["vllm", "serve", "body"] for c in cmds)
    # the engine's words keep their offsets in the script (positions of findings)
    engine = list(S.commands(script, {}, []))[-1]
    assert [script[w.offset : w.offset + len(w.text)] for w in engine] == want


@pytest.mark.parametrize(
    ("script", "want"),
    [
        ("echo hi>/tmp/log;vllm serve m>/tmp/log", [["echo", "hi"], ["vllm", "serve", "m"]]),
        ("vllm serve m --port 8000 2>&1>>/tmp/log", [["vllm", "serve", "m", "--port", "8000"]]),
        # quoted digits are a word, not an io-number; unquoted ones are (sh redirects descriptor 8000)
        ('vllm serve m --port "8000">/tmp/log', [["vllm", "serve", "m", "--port", "8000"]]),
        ("vllm serve m --port 8000>/tmp/log", [["vllm", "serve", "m", "--port"]]),
    ],
)
def test_a_redirection_ends_the_word_before_it(script: str, want: list[list[str]]) -> None:
    """``<`` and ``>`` are operators: the word before them ends there unless it is an io-number (unquoted
    digits, POSIX 2.10.1), and the redirection is no word of the command."""
    assert _commands(script) == want


def test_a_body_without_its_delimiter_runs_to_the_end() -> None:
    assert _commands("cat <<EOF\nvllm serve body\n") == [["cat"]]


def test_a_bare_operator_before_a_newline_starts_no_body() -> None:
    """``cat <<`` then a newline is a syntax error in sh: no later word is taken for its delimiter."""
    assert _commands("cat <<\nvllm serve real\necho after\n")[1:] == [
        ["vllm", "serve", "real"],
        ["echo", "after"],
    ]
    assert _commands("cat << ;\nvllm serve real\necho after\n")[-2:] == [
        ["vllm", "serve", "real"],
        ["echo", "after"],
    ]


def test_a_here_string_has_no_body() -> None:
    assert _commands("cat <<<'x'\nvllm serve real")[-1] == ["vllm", "serve", "real"]


def test_many_here_documents_are_read_in_linear_time() -> None:
    """Every line is looked at once: 20,000 here-documents of a quoted line each, then the engine."""
    n = 20_000
    script = "".join(f"cat <<E{k}\n'\nE{k}\n" for k in range(n)) + "vllm serve real"
    assert _commands(script)[-1] == ["vllm", "serve", "real"]


def test_scripts_without_a_body_lex_as_before() -> None:
    """A ``<<`` that no newline follows changes nothing: tokens as with the operator read as plain text."""
    rng = random.Random(7)
    for _ in range(300):
        words = [
            rng.choice(["a", "'b c'", '"$X"', "<<E", "<<-E", "<< E", ";", "|", "vllm"]) for _ in range(8)
        ]
        script = " ".join(words)
        assert [t for t in S.lex(script) if t != "\n"] == [t for t in S.lex(script + " ") if t != "\n"]


def test_kvlint_sizes_an_engine_after_a_chat_template_here_document(tmp_path: Path) -> None:
    path = tmp_path / "d.yaml"
    path.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  template:\n    spec:\n"
        "      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n"
        "      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.11.0\n"
        "        command: [sh, -c]\n        args:\n        - |\n"
        "          cat > /tmp/t.jinja <<'EOF'\n"
        "          {% if m['role'] == 'user' %}Don't {{ m['content'] }}{% endif %}\n"
        "          EOF\n"
        "          vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 131072 --chat-template /tmp/t.jinja\n"
        "        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    result = run_check([str(path)], Options(allow_hub=False))
    rules = {d.rule: d for d in result.diagnostics}
    assert "KV503" not in rules
    kv103 = rules["KV103"]  # sized: one request of 131,072 tokens does not fit an L4
    line = path.read_text().split("\n")[kv103.loc.line - 1]
    assert line[kv103.loc.column - 1 :].startswith("131072")
