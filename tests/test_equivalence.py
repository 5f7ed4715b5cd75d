"""Guards for the performance work in load.py, engines/shell.py and engines/vllm.py.

The fast paths (memoised scalar typing, run-at-a-time shell lexing, memoised vLLM option tables, the
garbage-collector pause) must give exactly what the straightforward code gives. These tests compare
against independent references (``yaml.safe_load`` for scalar typing) or pin the edge cases the fast
paths special-case (a backslash ending a script, ``#`` inside a word, a trailing ``$``).
"""

from __future__ import annotations

import gc

import yaml
from test_load_fastpaths import _go_yaml_v2

from kvlint.engines import shell, vllm
from kvlint.load import load_paths, load_text

SCALARS = [
    "8",
    "08",
    "0x1F",
    "0o17",
    "1_000",
    "-3",
    "+4",
    "0.9",
    "1e3",
    ".inf",
    "-.Inf",
    ".nan",
    "true",
    "False",
    "yes",
    "off",
    "~",
    "null",
    "",
    "2024-01-02",
    "abc",
    "'8'",
    '"true"',
    "!!str 8",
    "!!int 12",
    "!!float 1",
    "!!bool yes",
    "!!null ''",
    "3:20",
    "0b101",
]


def _typed(text: str) -> object:
    docs = load_text(f"k: {text}\n", "t.yaml").documents
    return docs[0].data["k"]


def test_scalar_typing_matches_safe_load_and_is_stable_when_memoised() -> None:
    for text in SCALARS:
        expected = yaml.safe_load(f"k: {text}\n")["k"]
        # a plain scalar: typed as kubectl's go-yaml v2 types it (``08`` is a float)
        if text[:1] not in "'\"!":
            if ":" in text and isinstance(expected, int):
                expected = text  # go-yaml v2 has no YAML 1.1 base-60 numbers
            expected = _go_yaml_v2(text, expected)
        if text == "2024-01-02":
            expected = "2024-01-02"  # timestamps stay text (as Kubernetes' YAML-to-JSON leaves them)
        for _ in range(2):  # the second read is served by the memo
            got = _typed(text)
            if isinstance(expected, float) and expected != expected:
                assert isinstance(got, float) and got != got, text
            else:
                assert (type(got), got) == (type(expected), expected), text


def test_quoted_and_plain_scalars_with_same_text_keep_their_own_types() -> None:
    data = load_text('a: 8\nb: "8"\nc: 8\nd: !!str 8\n', "t.yaml").documents[0].data
    assert data == {"a": 8, "b": "8", "c": 8, "d": "8"}
    assert _typed("! 8") == "8"  # the non-specific tag ``!`` means a string
    assert [data.locs[k].line for k in "abcd"] == [1, 2, 3, 4]


def test_lex_runs_keep_words_offsets_and_edge_cases() -> None:
    script = 'vllm serve a#b --x="q\\"z"; echo $HOME&&y ;; z | w\n"tail\\'
    toks = shell.lex(script)
    words = [t for t in toks if isinstance(t, shell.Word)]
    assert [w.raw for w in words] == [
        "vllm",
        "serve",
        "a#b",
        '--x="q\\"z"',
        "echo",
        "$HOME",
        "y",
        "z",
        "w",
        '"tail\\',
    ]
    assert [t for t in toks if isinstance(t, str)] == [";", "&&", ";;", "|", "\n"]
    pos, expected_starts = 0, []
    for w in words:  # each word's first character, searching left to right
        pos = script.index(w.raw, pos)
        expected_starts.append(pos)
        pos += len(w.raw)
    assert [w.start for w in words] == expected_starts
    assert "".join(p.text for p in words[3].parts) == '--x=q"z'
    assert "".join(p.text for p in words[-1].parts) == "tail\\"  # a backslash ending the script stays
    assert [t if isinstance(t, str) else t.raw for t in shell.lex("# c\nx#y")] == ["\n", "x#y"]


def test_k8s_expand_edge_cases() -> None:
    env = {"A": "1"}
    assert shell.k8s_expand("x$(A)y$$z$(B)$", env) == ("x1y$z$(B)$", True)
    assert shell.k8s_expand("$(A", env) == ("$(A", False)
    assert shell.k8s_expand("$x$", env) == ("$x$", False)


def test_known_options_is_a_fresh_copy_of_a_memoised_table() -> None:
    a = vllm.known_options("0.11.0")
    a["--bogus-flag"] = ("bogus", "value")
    assert "--bogus-flag" not in vllm.known_options("0.11.0")
    assert vllm._tables("0.11.0")[0] is vllm._tables("0.11.0")[0]
    cfg = vllm.parse_vllm_argv(["m", "--bogus-flag", "1", "--max-model-len", "4k"], version="0.11.0")
    assert any(f.rule == "KV205" and "--bogus-flag" in f.message for f in cfg.findings)


def test_loading_leaves_the_garbage_collector_as_it_found_it(tmp_path) -> None:
    (tmp_path / "a.yaml").write_text("a: [1, 2]\n---\nb: {c: d}\n")
    assert gc.isenabled()
    assert len(load_paths([str(tmp_path)]).documents) == 2
    assert gc.isenabled() and gc.get_freeze_count() == 0
    gc.disable()
    try:
        assert len(load_paths([str(tmp_path)]).documents) == 2
        assert not gc.isenabled()
    finally:
        gc.enable()
