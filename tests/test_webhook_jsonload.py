"""The review worker's direct JSON-to-document builder (kvlint.webhook.jsonload) against the loader.

``load_object(obj, path)`` must return exactly what ``load_text(json.dumps(obj, indent=1, ensure_ascii=False),
path)`` returns (values, their Python types, key order, every position), or None so that the worker reads the
text. Checked on every document of the fixtures and the shared corpus, and on hand-made edge cases.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kvlint.load import MAX_DEPTH, load_text
from kvlint.source import LDict, LList
from kvlint.webhook.jsonload import LazyJsonLines, dump_lines, dump_text, load_object

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "manifests"
LABEL = "<admission Deployment/default/x>.json"


def _same(a: Any, b: Any, where: str = "$") -> None:
    """Assert ``a`` and ``b`` are the same loaded value: types, order, contents and positions."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, LDict):
        assert a.loc == b.loc, f"{where}: loc {a.loc} != {b.loc}"
        assert list(a) == list(b), f"{where}: keys"
        assert a.locs == b.locs, f"{where}: value locations"
        assert a.key_locs == b.key_locs, f"{where}: key locations"
        for k in a:
            _same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, LList):
        assert a.loc == b.loc, f"{where}: loc {a.loc} != {b.loc}"
        assert a.locs == b.locs, f"{where}: item locations"
        assert len(a) == len(b), f"{where}: length"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and a != a:
        assert b != b
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def _check(obj: dict[str, Any]) -> bool:
    """Compare both ways of loading ``obj``; True when the fast path answered."""
    fast = load_object(obj, LABEL)
    if fast is None:
        return False
    text = dump_text(obj)
    assert dump_lines(obj) == text.split("\n")  # the lines a review looks script positions up in
    slow = load_text(text, LABEL)
    assert fast.files == slow.files
    assert fast.read_paths == slow.read_paths
    assert fast.findings == slow.findings
    assert fast.source_texts == slow.source_texts
    assert len(fast.documents) == len(slow.documents)
    for f, s in zip(fast.documents, slow.documents, strict=True):
        assert (f.path, f.index, f.loc) == (s.path, s.index, s.loc)
        _same(f.data, s.data)
    return True


def _documents(paths: list[Path]) -> list[dict[str, Any]]:
    out = []
    for p in paths:
        for doc in load_text(p.read_bytes(), str(p)).documents:
            try:
                obj = json.loads(json.dumps(doc.data))
            except (TypeError, ValueError):
                continue
            if isinstance(obj, dict):
                out.append(obj)
    return out


def test_fixtures_and_corpus_documents() -> None:
    paths = sorted((ROOT / "fixtures").rglob("*.yaml"))
    if CORPUS.is_dir():
        paths += sorted(CORPUS.rglob("*.yaml"))
    docs = _documents(paths)
    assert len(docs) > 200
    answered = sum(_check(d) for d in docs)
    # nearly every manifest takes the fast path (those with {{ }} or non-BMP characters do not)
    assert answered > 0.9 * len(docs)


EDGE_CASES: list[dict[str, Any]] = [
    {},
    {"a": {}, "b": [], "c": [[]], "d": [{}], "e": [[], {}, [1, [2, {"x": []}]]]},
    {"n": [0, -1, 7, 10**19, 10**30, 10**120, -(10**101)]},
    {"f": [1.5, -0.0, 0.1, 1e100, 1e-07, 5e-324, 1.7976931348623157e308, 2.0, 100.0, 1e16]},
    {"b": [True, False, None], "t": "true", "z": "null", "o": "0o17", "x": "0x1F", "s": "1:30"},
    {'quote"key': "back\\slash", "": "", "<<": {"merge": "no"}, "true": 1, "1": 2, "null": 3},
    {"ctl": "a\x01b\nc\td\re\x1f", "uni": "é ü 中文 \u00a0\u2027\u202a\ufefe\uff00\ufffd", "k é": "v"},
    {"cmd": ["/bin/sh", "-c", "vllm serve m --max-model-len 8192 # a comment\nexec x"]},
    {"deep": json.loads("[" * 150 + "1" + "]" * 150)},
    {"list": {"kind": "List", "items": [{"kind": "Pod", "metadata": {"name": "a"}}, {"kind": "Pod"}]}},
    {
        "kind": "List",
        "items": [{"kind": "Pod", "metadata": {"name": "a"}}, {"kind": "ConfigMap", "data": {}}],
    },
    {"kind": "PodList", "items": []},
    # keys met again (their width is memoised): escapes, non-ASCII, longer than the memo keeps
    {'q"k': {'q"k': 1, "t\tk": [{"t\tk": 2, "é\\": 3}]}, "é\\": {'q"k': [4]}, "L" * 80: {"L" * 80: 5}},
    # the widest column the builder packs: the longest key it takes (998 characters, 1,000 as JSON), its value
    # at the deepest nesting of mappings it takes
    {"d": json.loads('{"d": ' * 192 + '{"' + "K" * 998 + '": [1, {"' + "K" * 998 + '": 2}]}' + "}" * 192)},
]


@pytest.mark.parametrize("obj", EDGE_CASES, ids=range(len(EDGE_CASES)))
def test_edge_cases_match_the_loader(obj: dict[str, Any]) -> None:
    assert _check(obj)


GIVE_WAY: list[dict[str, Any]] = [
    {"a": "line\u2028break"},
    {"a": "next\x85line"},
    {"a": "para\u2029graph"},
    {"a": "del\x7f"},
    {"a": "bom\ufeff"},
    {"a": "emoji \U0001f600"},
    {"a": "lone \ud800 surrogate"},
    {"a": "{{ .Values.image }}"},
    {"metadata": {"annotations": {"x": "kvlint: ignore"}}},
    {"a": "# Source: chart/templates/x.yaml"},
    {"k" * 1200: 1},
    {"a": float("nan")},
    {"a": float("inf")},
    {"a": (1, 2)},
    {1: "int key"},
    {"ok": 1, "del\x7fkey": 2},
    {"a": {"{{ key }}": 1}},
    {"a": {"x": 1}, "b": {"x": 2, "line\u2028key": 3}},
    {"deep": json.loads("[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5))},
]


@pytest.mark.parametrize("obj", GIVE_WAY, ids=range(len(GIVE_WAY)))
def test_gives_way_to_the_loader(obj: dict[str, Any]) -> None:
    assert load_object(obj, LABEL) is None


def test_safe_is_the_unsafe_pattern() -> None:
    """The builder's quick test for strings (substring searches for ASCII ones) says what the pattern says."""
    from kvlint.webhook.jsonload import _UNSAFE, _safe

    texts = [chr(c) for c in range(0x10000)] + ["\U0001f600", "x" * 500 + "\x7f", "x" * 500 + "\x80"]
    texts += ["{", "{ {", "a{{b", "kvlint", "kvlint:", "x kvlint: y", "# Source:", "# Source: x", "#Source: "]
    texts += [t + "é" for t in texts[-9:]] + ["é" + chr(c) for c in range(0x7E, 0xA2)]
    for t in texts:
        assert _safe(t) == (_UNSAFE.search(t) is None), repr(t)


def test_lazy_lines_are_the_json_text() -> None:
    obj = {"spec": {"args": ["--model", "m"]}}
    lazy = LazyJsonLines(obj)
    lines = dump_text(obj).split("\n")
    assert len(lazy) == len(lines)
    assert list(lazy) == lines
    assert lazy[2] == lines[2] and lazy[-1] == "}"
    # outside what load_object builds, the lines are json.dumps' own
    for odd in ({"t": (1, [2])}, {"n": float("nan")}, {1: "k"}):
        assert list(LazyJsonLines(odd)) == dump_text(odd).split("\n")
    for odd in ({"t": (1, [2])}, {"n": float("nan")}, {1: "k"}, {"s": {1, 2}}):
        try:
            lines = dump_text(odd).split("\n")
        except TypeError:
            with pytest.raises(TypeError):
                len(LazyJsonLines(odd))
            continue
        for i in range(len(lines)):
            one = LazyJsonLines(odd)
            assert (len(one), one[i]) == (len(lines), lines[i])


def _lines_read_alone(obj: Any) -> None:
    """Every line of ``obj``'s text read alone from a fresh LazyJsonLines (its number counted, the line
    written by itself), then all of them from one, past the lines written one at a time."""
    lines = dump_text(obj).split("\n")
    for i in range(len(lines)):
        lazy = LazyJsonLines(obj)
        assert lazy[i] == lines[i] and lazy[i] == lines[i], (i, lines[i])
        assert len(lazy) == len(lines)
    lazy = LazyJsonLines(obj)
    assert [lazy[i] for i in range(len(lines))] == lines
    assert lazy[-1] == lines[-1] and lazy[1:3] == lines[1:3] and list(lazy) == lines
    with pytest.raises(IndexError):
        LazyJsonLines(obj)[len(lines)]


def test_lines_read_one_at_a_time_are_the_json_text() -> None:
    for obj in EDGE_CASES:
        _lines_read_alone(obj)
    paths = sorted((ROOT / "fixtures").rglob("*.yaml"))
    if CORPUS.is_dir():
        paths += sorted(CORPUS.rglob("*.yaml"))[:150]
    for obj in _documents(paths)[:400]:
        _lines_read_alone(obj)


def test_positions_are_packed_until_read() -> None:
    """The builder stores positions packed, one int each, as the loader does (kvlint.source.Packing), and makes
    a Loc only for a position that is read (perf48: a Loc per key and value was about a third of its work); the
    positions read are the loader's (the tests above compare every one)."""
    obj = {"kind": "Pod", "spec": {"containers": [{"name": "c", "args": ["--a", "1"]}]}}
    root = load_object(obj, LABEL).documents[0].data  # type: ignore[union-attr]
    containers = root["spec"]["containers"]
    for d in (root, root["spec"], containers[0]):
        assert d._locs is None and d._key_locs is None
        assert all(type(p) is int for p in (*d._plocs.values(), *d._pkey_locs.values()))
    assert containers._locs is None and all(type(p) is int for p in containers._plocs)
    assert type(containers[0]["args"]._loc) is int
    slow = load_text(dump_text(obj), LABEL).documents[0].data
    assert containers[0]["args"].locs == slow["spec"]["containers"][0]["args"].locs
