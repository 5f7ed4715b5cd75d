"""Positions of the words of an ``sh -c`` script in its manifest: :func:`kvlint.engines.command._offset_locs`
(all of a script's offsets at once) against :func:`kvlint.engines.command._offset_loc` (one offset, the
whole per-scalar work each time), on scripts written in each YAML scalar style, and on the hostile shape the
per-offset work made quadratic (a literal block of many blank lines, then many words)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from kvlint.engines.command import _offset_loc, _offset_locs
from kvlint.load import load_paths
from kvlint.source import Loc

SCRIPTS = [
    "vllm serve m --port 8000",
    "set -e\nexport A=1\nvllm serve m \\\n  --max-model-len 4096 \\\n  --port $PORT\n",
    "\n\n\nvllm serve m --x 'a b' \"c\td\"",
    'python3 -m vllm.entrypoints.openai.api_server --model "$M" # comment\nsleep 1',
]


def _literal(script: str) -> str:
    return "|\n" + "\n".join("          " + line if line else "" for line in script.split("\n"))


def _styles(script: str) -> list[str]:
    single = "'" + script.replace("'", "''").replace("\n", "\n\n") + "'"
    return [_literal(script), json.dumps(script), single]


def _script_arg(tmp_path: Path, value: str, name: str) -> tuple[str, Loc]:
    path = tmp_path / f"{name}.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n"
        f"    command: [sh, -c]\n    args:\n    - {value}\n"
    )
    result = load_paths([str(path)])
    args = result.documents[0].data["spec"]["containers"][0]["args"]
    return args[0], args.locs[0]


@pytest.mark.parametrize("k", range(len(SCRIPTS)))
def test_offset_locs_equal_offset_loc_in_every_scalar_style(tmp_path: Path, k: int) -> None:
    for s, value in enumerate(_styles(SCRIPTS[k])):
        script, loc = _script_arg(tmp_path, value, f"s{k}_{s}")
        assert "vllm" in script  # the value as YAML reads it (folding may change its line breaks)
        offsets = list(range(len(script)))
        random.Random(k).shuffle(offsets)
        assert _offset_locs(loc, script, offsets) == [_offset_loc(loc, script, o) for o in offsets]


def test_offset_locs_without_a_file_position() -> None:
    assert _offset_locs(None, "a b", [0, 2]) == [None, None]
    loc = Loc("-", 3, 5)
    assert (
        _offset_locs(loc, "a b", [0, 2])
        == [_offset_loc(loc, "a b", 0), _offset_loc(loc, "a b", 2)]
        == [loc, loc]
    )


def test_a_literal_block_of_many_blank_lines_then_many_words(tmp_path: Path) -> None:
    """20,000 blank lines then 20,000 words: each word's position skipped the blank lines again (quadratic;
    80,000 of each took about a quarter of an hour). The positions are those one offset at a time gives."""
    n = 20_000
    script_text = "\n" * n + "vllm serve m" + " --x y" * n
    script, loc = _script_arg(tmp_path, _literal(script_text), "blank")
    assert script.rstrip("\n") == script_text
    offsets = [n + 5 * k for k in range(n)]
    got = _offset_locs(loc, script, offsets)
    assert len(got) == n
    for k in random.Random(1).sample(range(n), 10) + [0, n - 1]:
        assert got[k] == _offset_loc(loc, script, offsets[k])


@pytest.mark.parametrize("k", range(len(SCRIPTS)))
def test_each_character_is_found_where_its_position_points(tmp_path: Path, k: int) -> None:
    """The position of every character of a literal block script (leading empty lines included: they are
    lines of the value) is where that character stands in the file; kvlint once counted the leading empty
    lines twice and pointed below the engine command."""
    for chomp in ("", "-", "+"):
        value = _literal(SCRIPTS[k]).replace("|", "|" + chomp, 1)
        script, loc = _script_arg(tmp_path, value, f"lit{k}{chomp or '_'}")
        assert "vllm" in script
        lines = Path(loc.file).read_text().split("\n")
        offsets = [o for o, c in enumerate(script) if not c.isspace()]
        for o, at in zip(offsets, _offset_locs(loc, script, offsets), strict=True):
            assert at is not None
            assert lines[at.line - 1][at.column - 1] == script[o], (o, at)


@pytest.mark.parametrize("k", range(len(SCRIPTS)))
@pytest.mark.parametrize("header", ["|2", "|-3", "|+4", "|2-"])
def test_an_indentation_indicator_keeps_the_first_lines_extra_spaces(
    tmp_path: Path, k: int, header: str
) -> None:
    """With an explicit indentation indicator (``|2``) a literal block's content may start with spaces that are
    part of the value; the content column is the parent's indentation plus the indicator, not the first
    line's indentation (kvlint took that and pointed as many columns to the right)."""
    extra = int("".join(c for c in header if c.isdigit()))
    body = "\n".join(" " * (4 + extra) + "  " + line if line else "" for line in SCRIPTS[k].split("\n"))
    script, loc = _script_arg(tmp_path, header + "\n" + body, f"ind{k}_{extra}")
    assert "vllm" in script and script.lstrip("\n").startswith("  ")  # the value keeps two leading spaces
    lines = Path(loc.file).read_text().split("\n")
    offsets = [o for o, c in enumerate(script) if not c.isspace()]
    for o, at in zip(offsets, _offset_locs(loc, script, offsets), strict=True):
        assert at is not None
        assert lines[at.line - 1][at.column - 1] == script[o], (o, at)


_POD = """apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-l4}}
  containers:
  - name: c
    image: vllm/vllm-openai:v0.11.0
    env:
    - {{name: MODEL, value: meta-llama/Llama-3.1-8B-Instruct}}
    command: [sh, -c]
    args:
    - {script}
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


@pytest.mark.parametrize(
    "script",
    [
        "|\n      vllm serve $(MODEL) --max-num-seq 16 --max-model-len 131072",
        '"echo $$HOSTNAME; vllm serve $(MODEL) --max-num-seq 16 --max-model-len 131072"',
        "vllm serve $(MODEL) --served-model-name $(UNSET) --max-num-seq 16 --max-model-len 131072",
        "|\n      echo $$A $$B\n      vllm serve $(MODEL) $(MODEL_X) \\\n        --max-num-seq 16 --max-model-len 131072",
    ],
)
def test_findings_in_a_script_kubernetes_expanded_point_at_their_flag(tmp_path: Path, script: str) -> None:
    """A script holding a Kubernetes $(VAR) (or a $$) is read after the expansion, which changes its length:
    the positions of its words are those of the text as written (kvlint took the expanded text's offsets, and
    pointed past the flag by what the expansion added, or at the script's start in a quoted scalar)."""
    from kvlint.pipeline import run_check

    path = tmp_path / "pod.yaml"
    path.write_text(_POD.format(script=script))
    lines = path.read_text().split("\n")
    diags = {d.rule: d for d in run_check([str(path)]).diagnostics}
    kv205, kv103 = diags["KV205"], diags["KV103"]
    assert lines[kv205.loc.line - 1][kv205.loc.column - 1 :].startswith("--max-num-seq 16")
    assert lines[kv103.loc.line - 1][kv103.loc.column - 1 :].startswith("131072")


def test_positions_in_a_script_whose_expansion_hit_its_length_bound(tmp_path: Path) -> None:
    """A script of 20,000 ``$(A)`` with A 100,000 characters long: Kubernetes expansion as kvlint reads it stops
    at the argument's length bound, leaving the later references as written. Placing the engine's words in the
    text as written expands it again within the expanded text's length (an unbounded expansion built a
    2 GB string). The words still land on their text in the file."""
    import tracemalloc

    from kvlint.engines.command import _Item, _raw_offsets
    from kvlint.engines.shell import k8s_expand

    env = {"A": "x" * 100_000}
    raw = "vllm serve m --max-model-len 4096 " + "$(A)" * 20_000
    text, changed = k8s_expand(raw, env)
    assert changed and len(text) == len(raw) - 4 + 100_000 and text.count("$(A)") == 19_999
    offsets = [text.index("--max-model-len"), text.index("4096")]
    tracemalloc.start()
    try:
        source, moved = _raw_offsets(_Item(text, None, "env", raw), env, offsets)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # linear in the texts (a few copies, a piece record per reference), not the unbounded expansion (~2 GB)
    assert peak < 200 * len(raw) + 4 * len(text)
    assert source == raw
    assert [raw[o : o + 4] for o in moved] == ["--ma", "4096"]


@pytest.mark.parametrize(
    ("script", "value"),
    [
        # plain scalar: an ANSI-C quote whose escapes (\' \t) make its text shorter than as written, before the flags
        (
            "vllm serve $(MODEL) --served-model-name $'it\\'s\\tq' --max-num-seq 16 --max-model-len $'131072'",
            "$'131072'",
        ),
        # literal block: a quote glued to plain text, a \x escape, a line continuation, the value half quoted
        (
            "|\n      vllm serve $(MODEL) --served-model-name $'a\\x41\\'b'z \\\n"
            "        --max-num-seq $'16' --max-model-len $'131'072",
            "$'131'072",
        ),
        # double-quoted scalar: the quote next to a "..." piece, the value in a --flag=value word
        (
            "\"vllm serve $(MODEL) --served-model-name $'a\\\\'b'\\\"c\\\" --max-num-seq 16 "
            "--max-model-len=$'131072'\"",
            "--max-model-len=$'131072'",
        ),
        # single-quoted scalar ('' is one ')
        (
            "'vllm serve $(MODEL) --served-model-name $''x\\''y'' --max-num-seq $''16'' --max-model-len $''131072'''",
            "$'131072'",
        ),
    ],
)
def test_findings_after_and_in_ansi_c_quoted_words_point_at_their_text(
    tmp_path: Path, script: str, value: str
) -> None:
    """A ``$'...'`` word is read as a quoted piece (its escapes decoded, its text shorter than as written) closed
    by an empty quoted piece, as ``'...'`` is: the findings on the words after it, and on a value written in it,
    point at those words as written in the file. (``bash -c``: under ``sh -c`` a ``$'...'`` word is not known, dash
    having no ANSI-C quotes.)"""
    from kvlint.pipeline import run_check

    path = tmp_path / "pod.yaml"
    path.write_text(_POD.replace("[sh, -c]", "[bash, -c]").format(script=script))
    lines = path.read_text().split("\n")
    diags = {d.rule: d for d in run_check([str(path)]).diagnostics}
    kv205, kv103 = diags["KV205"], diags["KV103"]
    assert lines[kv205.loc.line - 1][kv205.loc.column - 1 :].startswith("--max-num-seq ")
    assert lines[kv103.loc.line - 1][kv103.loc.column - 1 :].startswith(
        value.replace("'", "''") if script[0] == "'" else value
    )
