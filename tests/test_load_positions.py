"""Packed positions (kvlint.source.Packing): the loader stores each entry's position as one int and builds the
``Loc`` objects when ``locs`` / ``key_locs`` are first read. Checked here: packing is exact at the edges (the
longest line, the last column, a line offset), the positions read back equal PyYAML's composer marks on long
lines and in later ``---`` segments, a loaded tree's positions hold no GC-tracked object until they are read,
and code that replaces a container's ``loc`` before reading ``locs`` (the Helm remapping) still reads the
positions of the file the values came from.
"""

from __future__ import annotations

import gc
import json
import random
from typing import Any

import yaml

from kvlint.load import load_text
from kvlint.source import LDict, LList, Loc, Packing


def test_packing_round_trips_every_position_of_a_text() -> None:
    rng = random.Random(3)
    for length in (0, 1, 2, 3, 7, 8, 100, 2**14 - 2, 2**14 - 1, 2**14, 10**6, 2**40):
        p = Packing.for_text("f.yaml", 5, length)
        cases = {(0, 0), (0, length), (length, 0), (length, length)}
        cases |= {(rng.randint(0, length), rng.randint(0, length)) for _ in range(50)}
        for line, column in cases:
            packed = p.pack(line, column)
            want = Loc("f.yaml", line + 5, column + 1)
            assert p.unpack(packed) == want
            assert p.unpack_dict({"k": packed}) == {"k": want}
            assert p.unpack_list([packed]) == [want]
            assert p.pack_loc(want) == packed


def _marks(node: yaml.Node, out: list[tuple[int, int]]) -> None:
    """0-based (line, column) of every key and value under ``node``, in document order."""
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            out.append((k.start_mark.line, k.start_mark.column))
            out.append((v.start_mark.line, v.start_mark.column))
            _marks(v, out)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            out.append((item.start_mark.line, item.start_mark.column))
            _marks(item, out)


def _ours(value: Any, out: list[tuple[int, int]]) -> None:
    """The same positions read from a loaded value's ``key_locs`` / ``locs``."""
    if isinstance(value, LDict):
        for k, v in value.items():
            out.append((value.key_locs[k].line - 1, value.key_locs[k].column - 1))
            out.append((value.locs[k].line - 1, value.locs[k].column - 1))
            _ours(v, out)
    elif isinstance(value, LList):
        for i, item in enumerate(value):
            out.append((value.locs[i].line - 1, value.locs[i].column - 1))
            _ours(item, out)


def test_positions_on_a_long_line_and_in_later_segments_equal_the_composer_marks() -> None:
    # a one-line JSON document of 150,000 characters (columns far beyond a small text's packing width),
    # then YAML documents after it: each --- segment is packed on its own when the file is read in segments
    obj = {"items": [{"name": f"n{i}", "v": [i, str(i), {"x": i * 0.5}]} for i in range(2900)]}
    one_line = json.dumps(obj)
    assert len(one_line) > 2**17
    block = "a:\n  b: [1, 2, {c: d}]\n  e:\n    - f\n    - g: h\n"
    for text in (
        one_line,
        one_line + "\n---\n" + "---\n".join([block] * 3),
        block + "---\n" + one_line + "\n",
    ):
        # the same file with a template action after it is read segment by segment, each with its line offset;
        # PyYAML composes the documents of ``text`` in it as in ``text`` alone (a stream is composed document by
        # document), so one composition (of pure-Python PyYAML, most of this test's time) gives both references
        text2 = text + "\n---\nx: {{ .Values.y }}\n"
        nodes = list(yaml.compose_all(text2, Loader=yaml.SafeLoader))
        assert nodes[-1].start_mark.line == text2.count("\n") - 1  # the template document comes last
        want: list[tuple[int, int]] = []
        for node in nodes[:-1]:
            _marks(node, want)
        got: list[tuple[int, int]] = []
        res = load_text(text, "f.yaml")
        assert not res.findings
        for doc in res.documents:
            _ours(doc.data, got)
        assert got == want
        want2 = list(want)
        _marks(nodes[-1], want2)
        res2 = load_text(text2, "f.yaml")
        assert [f.rule for f in res2.findings] == ["KV002"]
        got2: list[tuple[int, int]] = []
        for doc in res2.documents:
            _ours(doc.data, got2)
        assert got2 == want2 and len(want2) > len(want)


def test_loaded_positions_are_untracked_until_read() -> None:
    text = "a:\n  b: [1, 2, {c: d}]\n  e: f\n"
    d = load_text(text, "f.yaml").documents[0].data
    inner = d["a"]
    assert not gc.is_tracked(inner._plocs) and not gc.is_tracked(inner._pkey_locs)
    assert inner.locs == {"b": Loc("f.yaml", 2, 6), "e": Loc("f.yaml", 3, 6)}
    assert inner.key_locs == {"b": Loc("f.yaml", 2, 3), "e": Loc("f.yaml", 3, 3)}
    assert inner["b"].locs == [Loc("f.yaml", 2, 7), Loc("f.yaml", 2, 10), Loc("f.yaml", 2, 13)]


def test_positions_read_after_the_container_loc_was_replaced() -> None:
    # kvlint.render remaps a container's loc, then its locs: the locs must still be those of the loaded file
    d = load_text("a:\n  b: c\n", "f.yaml").documents[0].data
    inner = d["a"]
    inner.loc = Loc("templates/x.yaml", 40, 1)
    assert inner.locs == {"b": Loc("f.yaml", 2, 6)}
    assert inner.key_locs == {"b": Loc("f.yaml", 2, 3)}


def test_merge_keys_take_the_merged_entries_positions() -> None:
    text = "base: &b\n  x: 1\n  z: 2\nuse:\n  <<: *b\n  z: 3\n"
    d = load_text(text, "f.yaml").documents[0].data
    use = d["use"]
    assert dict(use) == {"z": 3, "x": 1}
    assert use.locs == {"z": Loc("f.yaml", 6, 6), "x": Loc("f.yaml", 2, 6)}
    assert use.key_locs == {"z": Loc("f.yaml", 6, 3), "x": Loc("f.yaml", 2, 3)}


def test_assigned_positions_replace_the_packed_ones() -> None:
    d = load_text("a: [1, 2]\nb: c\n", "f.yaml").documents[0].data
    d.locs = {"a": Loc("g", 9, 9)}
    d.key_locs = {}
    d["a"].locs = [Loc("g", 1, 1)]
    assert d.locs == {"a": Loc("g", 9, 9)} and d.key_locs == {} and d["a"].locs == [Loc("g", 1, 1)]
    fresh = LDict(loc=Loc("h"))
    fresh.locs["k"] = Loc("h", 2, 2)
    assert fresh.locs == {"k": Loc("h", 2, 2)} and fresh.key_locs == {} and LList().locs == []


def test_packed_positions_survive_pickle_and_copies() -> None:
    import copy
    import pickle

    text = "a:\n  b: [1, {c: d}]\n  e: f\n"
    for make in (lambda x: pickle.loads(pickle.dumps(x, pickle.HIGHEST_PROTOCOL)), copy.copy, copy.deepcopy):
        d = load_text(text, "f.yaml").documents[0].data
        x = make(d)
        assert x == d
        assert x["a"].locs == {"b": Loc("f.yaml", 2, 6), "e": Loc("f.yaml", 3, 6)}
        assert x["a"].key_locs == {"b": Loc("f.yaml", 2, 3), "e": Loc("f.yaml", 3, 3)}
        assert x["a"]["b"].locs == [Loc("f.yaml", 2, 7), Loc("f.yaml", 2, 10)]
        assert x["a"]["b"].locs == d["a"]["b"].locs


def _container_marks(node: yaml.Node, out: list[tuple[int, int]]) -> None:
    """0-based (line, column) of every mapping and sequence at or under ``node``, in document order."""
    if isinstance(node, yaml.MappingNode):
        out.append((node.start_mark.line, node.start_mark.column))
        for _, v in node.value:
            _container_marks(v, out)
    elif isinstance(node, yaml.SequenceNode):
        out.append((node.start_mark.line, node.start_mark.column))
        for item in node.value:
            _container_marks(item, out)


def _container_locs(value: Any, out: list[tuple[int, int]]) -> None:
    """The same positions read from the loaded containers' own ``loc``."""
    if isinstance(value, (LDict, LList)):
        assert value.loc is not None
        out.append((value.loc.line - 1, value.loc.column - 1))
        for item in value.values() if isinstance(value, LDict) else value:
            _container_locs(item, out)


def test_container_positions_equal_the_composer_marks() -> None:
    # every mapping's and sequence's own loc, stored packed by the loader, on a long line and in later
    # --- segments (a file with a template action, even a quoted one, is read segment by segment, each with
    # its line offset)
    obj = {"items": [{"name": f"n{i}", "v": [i, str(i), {"x": i * 0.5}]} for i in range(4000)]}
    one_line = json.dumps(obj)
    block = "a:\n  b: [1, 2, {c: d}]\n  e:\n    - f\n    - g: h\n    - [i, {j: k}]\n"
    for text in (
        one_line,
        one_line + "\n---\n" + "---\n".join([block] * 3),
        block + "---\n" + one_line + "\n",
        block + "---\nx: '{{ .Values.y }}'\n---\n" + block,
    ):
        want: list[tuple[int, int]] = []
        for node in yaml.compose_all(text, Loader=yaml.SafeLoader):
            _container_marks(node, want)
        got: list[tuple[int, int]] = []
        for doc in load_text(text, "f.yaml").documents:
            _container_locs(doc.data, got)
        assert got == want and len(want) > 4


def test_container_loc_is_packed_until_read_and_assignable() -> None:
    import copy
    import pickle

    d = load_text("a:\n  b: [1, {c: d}]\n", "f.yaml").documents[0].data
    seq = d["a"]["b"]
    assert isinstance(d["a"]._loc, int) and isinstance(seq._loc, int)  # no Loc made by the loader
    copies = [pickle.loads(pickle.dumps(d, pickle.HIGHEST_PROTOCOL)), copy.copy(d), copy.deepcopy(d)]
    assert d["a"].loc == Loc("f.yaml", 2, 3) and seq.loc == Loc("f.yaml", 2, 6)
    assert d["a"].loc is d["a"].loc  # made once, then kept
    for x in copies:
        assert x["a"].loc == Loc("f.yaml", 2, 3) and x["a"]["b"].loc == Loc("f.yaml", 2, 6)
        assert x["a"]["b"][1].loc == Loc("f.yaml", 2, 10)
    seq.loc = Loc("g", 7, 7)
    assert seq.loc == Loc("g", 7, 7) and seq.locs == [Loc("f.yaml", 2, 7), Loc("f.yaml", 2, 10)]
    seq.loc = None
    assert seq.loc is None and LDict().loc is None and LList(loc=Loc("h")).loc == Loc("h")


def _containers(value: Any, out: list[Any]) -> None:
    if isinstance(value, (LDict, LList)):
        out.append(value)
    for v in value.values() if isinstance(value, dict) else value if isinstance(value, list) else ():
        _containers(v, out)


def test_loc_of_unpacks_only_the_position_asked_for() -> None:
    """kvlint.source.loc_of on a loaded container reads the one packed position it is asked for, leaving the
    container's ``locs`` unbuilt, and answers what ``locs`` answers once built: for every key and index of
    every container of the corpus and fixture manifests, out-of-range indexes and unknown keys (the container's
    own position, else the default) included."""
    from pathlib import Path

    from kvlint.source import loc_of

    root = Path(__file__).resolve().parent.parent
    files = sorted((root.parent / "shared" / "corpus" / "manifests").glob("*.yaml"))
    files += sorted((root / "fixtures").rglob("*.yaml"))[:200]
    default = Loc("default", 9, 9)
    checked = 0
    for path in files:
        text = path.read_text(errors="replace")
        packed: list[Any] = []
        for doc in load_text(text, str(path)).documents:
            _containers(doc.data, packed)
        built: list[Any] = []
        for doc in load_text(text, str(path)).documents:
            _containers(doc.data, built)
        for p, b in zip(packed, built, strict=True):
            keys: list[Any] = (
                [*p, "no such key", -1, 10**6] if isinstance(p, LDict) else [*range(len(p)), -1, len(p), "k"]
            )
            for key in keys:
                got = loc_of(p, key, default)
                assert p._locs is None  # nothing built
                assert got == loc_of(b, key, default)
                if isinstance(b, LDict) and key in b:
                    assert got == b.locs[key]
                elif isinstance(b, LList) and isinstance(key, int) and 0 <= key < len(b):
                    assert got == b.locs[key]
                else:
                    assert got == (b.loc or default)
                checked += 1
    assert checked > 10_000
