"""The loader's fast paths give what the plain ways give (issue 19, the load stage).

kvlint/load.py builds documents straight from libyaml events with a hand-tuned loop, looks plain scalars up
in a memo in line, and replaces a few library calls with faster equivalents (``---`` markers found with
``str.find``, template openings matched by word lookup, real paths resolved once per directory, UTF-8 with a
BOM decoded without the codec wrapper). Each is checked here against an independent reference: PyYAML's own
``SafeLoader`` (values and types) and composer (positions), the regular expressions the fast paths replace,
``os.path.realpath`` and ``bytes.decode("utf-8-sig")``.
"""

from __future__ import annotations

import itertools
import math
import os
import random
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from kvlint import load as L
from kvlint.load import load_paths, load_text
from kvlint.source import LDict, LList, Loc

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
CORPUS = SHARED / "corpus" / "manifests"
ROOT = Path(__file__).resolve().parent.parent


class _RefLoader(yaml.SafeLoader):
    """PyYAML's SafeLoader, except that timestamps and ``!!binary`` stay text (as kvlint keeps them), and so do plain
    YAML 1.1 base-60 numbers (``1:30``), which kubectl's YAML reader does not resolve (kvlint.load)."""


class _NotBase60:
    """An implicit resolver's pattern that matches no text holding ``:``."""

    def __init__(self, pattern: Any) -> None:
        self.pattern = pattern

    def match(self, value: str) -> Any:
        return None if ":" in value else self.pattern.match(value)


_RefLoader.yaml_implicit_resolvers = {
    first: [
        (tag, _NotBase60(rx) if tag in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float") else rx)
        for tag, rx in resolvers
    ]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_RefLoader.add_constructor("tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node))
_RefLoader.add_constructor("tag:yaml.org,2002:binary", lambda loader, node: loader.construct_scalar(node))


def _go_parse_int(s: str) -> int | None:
    """Go's strconv.ParseInt(s, 0, 64), falling back to ParseUint(s, 0, 64) (no sign), as go-yaml v2 tries them."""
    neg = s[:1] == "-"
    body = s[1:] if s[:1] in "+-" else s
    bases = {"0x": 16, "0X": 16, "0o": 8, "0O": 8, "0b": 2, "0B": 2}
    if body[:2] in bases:
        digits, base = body[2:], bases[body[:2]]
    elif body[:1] == "0" and len(body) > 1:
        digits, base = body[1:], 8
    else:
        digits, base = body, 10
    if not digits or not all(
        c in "0123456789abcdefABCDEF"[: base if base <= 10 else 10 + 2 * (base - 10)] for c in digits
    ):
        return None
    n = -int(digits, base) if neg else int(digits, base)
    return n if -(2**63) <= n < 2**63 or (s[:1] not in "+-" and 0 <= n < 2**64) else None


def _go_yaml_v2(s: str, pyyaml: Any) -> Any:
    """What go-yaml v2's resolve (go.yaml.in/yaml/v2 v2.4.2 resolve.go, kubectl's and Helm's YAML reader) gives the
    plain scalar ``s``, where PyYAML's SafeLoader gave ``pyyaml``: its resolveMap adds y/Y/n/N booleans; a ``D``/``S``
    hint text loses its ``_`` and is ParseInt(s, 0, 64), else ParseUint, else a yamlStyleFloat float; a ``.`` hint
    text is ParseFloat as written."""
    if not isinstance(pyyaml, str):
        if isinstance(pyyaml, float) and s[:1] == "." and "_" in s:
            return s  # ParseFloat(".5_") fails: text
        return pyyaml
    if s in ("y", "Y", "n", "N"):
        return s in ("y", "Y")
    if s[:1] == "." and re.fullmatch(r"\.[0-9]+([eE][-+]?[0-9]+)?", s):
        return float(s)
    if s[:1] and s[:1] in "0123456789+-" and not re.match(r"[0-9]{4}-", s):
        plain = s.replace("_", "")
        n = _go_parse_int(plain)
        if n is not None:
            return n
        if re.fullmatch(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?", plain) and not math.isinf(
            float(plain)
        ):
            return float(plain)
    return pyyaml


def _same(a: Any, b: Any) -> bool:
    """Equal values of the same types, recursively (``1 == True`` and ``1 == 1.0`` do not count)."""
    if type(a) is not type(b) and not (isinstance(a, dict) and isinstance(b, dict)):
        if not (isinstance(a, list) and isinstance(b, list)):
            return False
    if isinstance(a, dict):
        return (
            list(a) == list(b)
            and all(_same(a[k], b[k]) for k in a)
            and all(type(x) is type(y) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def _scalars() -> list[str]:
    """Plain scalars in every YAML 1.1 form the implicit resolvers know, and near misses."""
    out: list[str] = []
    signs = ("", "-", "+")
    ints = (
        "0",
        "7",
        "12",
        "1_000",
        "0b1010",
        "0b1_0",
        "017",
        "0_17",
        "08",
        "09",
        "0x1F",
        "0x_1f",
        "0X1F",
        "0o17",
    )
    ints += ("1:30", "190:20:30", "1:60", "0:30", "1__2", "_1", "1_")
    floats = (
        "1.5",
        "1.",
        ".5",
        "1_000.5",
        "1.0e+3",
        "1.0e3",
        "1e3",
        "1.0E-3",
        "190:20:30.15",
        "1:30.5",
        "._",
        ".",
    )
    for sign, body in itertools.product(signs, ints + floats):
        out.append(sign + body)
    for word in ("inf", "nan", "yes", "no", "on", "off", "true", "false", "null", "y", "n"):
        for variant in {word, word.capitalize(), word.upper(), word[:1] + word[1:].upper()}:
            out.extend(["." + variant, "-." + variant, "+." + variant, variant])
    out += ["~", "", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "2002-1-1"]
    out += [
        "1.2.3",
        "v1",
        "nvidia.com/gpu",
        "0.9",
        "-",
        "--",
        "+-1",
        "1-2",
        "0x",
        "0b",
        "0b2",
        "12Gi",
        "8e-4",
    ]
    rng = random.Random(19)
    alphabet = "0123456789._:-+eExXbBoOaAnNfFtTyYlLsSuUiI~ "
    for _ in range(3000):
        out.append("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 7))).strip())
    return sorted(set(out))


def test_plain_scalars_are_typed_as_pyyaml_safeloader_and_go_yaml_v2_type_them() -> None:
    checked = 0
    for rnd in range(2):  # the second round is answered from the resolution memo
        for s in _scalars():
            text = f"k: {s}\n"
            try:
                want = yaml.load(text, Loader=_RefLoader)
            except yaml.YAMLError:
                continue  # not a scalar PyYAML can construct (`<<`, `=`, `a: b`...)
            if isinstance(want, dict) and list(want) == ["k"]:
                want = {"k": _go_yaml_v2(s, want["k"])}
            res = load_text(text, "s.yaml")
            got = res.documents[0].data if res.documents else None
            assert _same(got, want), (rnd, s, got, want)
            checked += rnd == 0
    assert checked > 1000


def test_quoted_and_tagged_scalars_match_pyyaml() -> None:
    for s in ("12", "1.5", "yes", "null", "~", ".inf", "0x1F", "1:30"):
        for form in (f"'{s}'", f'"{s}"', f"!!str {s}", f"|\n  {s}"):
            text = f"k: {form}\n"
            want = yaml.load(text, Loader=_RefLoader)
            assert _same(load_text(text, "q.yaml").documents[0].data, want), form
    for form in (
        "!!int 12",
        "!!float 1",
        "!!float 1.5",
        "!!bool yes",
        "!!null ''",
        "!!int 0x1F",
        "!!int 1:30",
    ):
        text = f"k: {form}\n"
        assert _same(load_text(text, "t.yaml").documents[0].data, yaml.load(text, Loader=_RefLoader)), form


def _walk_positions(node: yaml.Node, ours: Any, out: list[tuple[Loc, Loc]]) -> None:
    """(composer position, loader position) of every key and value under ``node``."""
    if isinstance(node, yaml.MappingNode):
        assert isinstance(ours, LDict)
        last = {yaml.load(yaml.serialize(k), Loader=_RefLoader): (k, v) for k, v in node.value}  # later wins
        for key, (knode, vnode) in last.items():
            kloc = Loc("f", knode.start_mark.line + 1, knode.start_mark.column + 1)
            vloc = Loc("f", vnode.start_mark.line + 1, vnode.start_mark.column + 1)
            out.append((kloc, ours.key_locs[key]._replace(file="f")))
            out.append((vloc, ours.locs[key]._replace(file="f")))
            _walk_positions(vnode, ours[key], out)
    elif isinstance(node, yaml.SequenceNode):
        assert isinstance(ours, LList) and len(ours.locs) == len(ours) == len(node.value)
        for i, item in enumerate(node.value):
            out.append(
                (
                    Loc("f", item.start_mark.line + 1, item.start_mark.column + 1),
                    ours.locs[i]._replace(file="f"),
                )
            )
            _walk_positions(item, ours[i], out)


def _manifest_texts() -> list[tuple[str, str]]:
    files = sorted((ROOT / "fixtures").rglob("*.yaml"))
    if CORPUS.is_dir():
        files += sorted(CORPUS.glob("*.y*ml"))
    return [(str(p), p.read_text(encoding="utf-8", errors="replace")) for p in files]


def _compose_and_construct(text: str) -> tuple[list[Any], list[Any]]:
    """PyYAML's nodes of every document of ``text`` and (non-null ones) what ``yaml.load_all`` with
    :class:`_RefLoader` gives, from one parse: each node constructed as ``load_all`` constructs it."""
    loader = _RefLoader(text)
    try:
        nodes = []
        while loader.check_node():
            nodes.append(loader.get_node())
        values = [loader.construct_document(node) for node in nodes]
    finally:
        loader.dispose()
    return nodes, [v for v in values if v is not None]


def test_values_and_positions_match_pyyaml_on_real_manifests() -> None:
    """Every document that PyYAML's SafeLoader reads: same values and types; and (documents without anchors,
    aliases or merge keys, whose positions the composer reports differently) every key's and value's line and
    column equal the start mark PyYAML's composer gives the node."""
    docs = positions = 0
    for name, text in _manifest_texts():
        if "{{" in text:
            continue  # templates: kvlint reads them segment by segment, PyYAML stops at the first error
        try:
            nodes, want = _compose_and_construct(text)
        except (yaml.YAMLError, TypeError):
            continue  # PyYAML cannot read it (kvlint reports it instead)
        res = load_text(text, name)
        got = [d.data for d in res.documents]
        if any(d.get("kind", "").endswith("List") for d in want if isinstance(d, dict)):
            continue  # kvlint flattens List kinds into their items
        assert len(got) == len(want), name
        for g, w in zip(got, want, strict=True):
            assert _same(g, w), name
            docs += 1
        if "&" in text or "*" in text or "<<" in text:
            continue
        pairs: list[tuple[Loc, Loc]] = []
        ours = iter(got)
        for node in nodes:
            if isinstance(node, yaml.ScalarNode) and node.tag.endswith(":null"):
                continue
            _walk_positions(node, next(ours), pairs)
        for ref, mine in pairs:
            assert ref == mine, name
        positions += len(pairs)
    assert docs > 20 and positions > 1000


def test_loaded_containers_have_every_attribute_their_constructor_sets() -> None:
    """LDict/LList are made with dict.__new__/list.__new__ in the loader: every slot must still be set, and
    the positions read back (built from the packed ones) have the types a constructed container's have."""
    res = load_text("a:\n  b: [1, {c: d}]\n", "c.yaml")
    d = res.documents[0].data
    for obj, cls in ((d, LDict), (d["a"], LDict), (d["a"]["b"], LList), (d["a"]["b"][1], LDict)):
        fresh = cls()
        assert type(obj) is cls
        for slot in cls.__slots__:
            getattr(obj, slot)  # set (an unset slot raises AttributeError)
        for attr in ("locs", "key_locs") if cls is LDict else ("locs",):
            got = getattr(obj, attr)
            assert type(got) is type(getattr(fresh, attr)), attr
            assert len(got) == len(obj) and all(
                type(v) is Loc for v in (got.values() if cls is LDict else got)
            )
        assert isinstance(obj.loc, Loc)


def test_document_markers_found_like_the_regex() -> None:
    rng = random.Random(7)
    pieces = ["-", "---", "\n", "\r", " ", "\t", "a", "#", "\u2028", "\n---\n", "--- x", "---a"]
    cases = ["", "---", "---\n", "a\n---", "a\n----\n", "\u2028--- x"]
    cases += ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 10))) for _ in range(20000)]
    cases += [t for _, t in _manifest_texts()]
    for text in cases:
        assert L._doc_starts(text) == [m.start() for m in L._DOC_START.finditer(text)], repr(text[:80])


def test_template_openings_matched_like_the_regex() -> None:
    words = L._GO_WORDS.split("|")
    pieces = ["{{", "{{-", "-", " ", "\t", "\n", "}", "}}", ".", "$", "/*", "x", "(", "Values", "'"]
    pieces += words + [w[:-1] for w in words] + [w + "s" for w in words]
    rng = random.Random(11)
    for _ in range(30000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 6)))
        for pos in range(min(len(text), 3)):
            want = L._ACTION_OPEN.match(text, pos)
            got = L._open_action(text, pos)
            assert (got is None) == (want is None), (text, pos)
            assert want is None or got is None or got.end() == want.end(), (text, pos)


def test_real_paths_resolved_per_directory_equal_os_realpath(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.yaml").write_text("a: 1\n")
    (tmp_path / "d" / "sub").mkdir()
    (tmp_path / "d" / "sub" / "b.yaml").write_text("b: 1\n")
    os.symlink(tmp_path / "d", tmp_path / "link")
    os.symlink(tmp_path / "d" / "a.yaml", tmp_path / "d" / "sub" / "alias.yaml")
    monkeypatch.chdir(tmp_path)
    paths = [
        "d/a.yaml",
        "link/a.yaml",
        "d/sub/../a.yaml",
        "d/sub/alias.yaml",
        "link/sub/alias.yaml",
        "./d//a.yaml",
    ]
    paths += [str(tmp_path / p) for p in paths] + ["d/sub/b.yaml", "link/sub/b.yaml"]
    real_dirs: dict[str, str] = {}
    for p in paths * 2:  # the second round uses the resolved directories
        assert L._realpath(p, real_dirs) == os.path.realpath(p), p
    # the same file named several ways (through a linked directory, a linked file) is read once
    res = load_paths(["d", "link", "d/a.yaml", "link/sub/alias.yaml", "d/sub/../sub/b.yaml"])
    assert res.files == 2 and [d.data for d in res.documents] == [{"a": 1}, {"b": 1}]
    monkeypatch.chdir(tmp_path / "d")
    assert L._realpath("a.yaml", {}) == os.path.realpath("a.yaml")


def test_utf8_decoding_like_the_utf8_sig_codec() -> None:
    bom = b"\xef\xbb\xbf"
    cases = [
        b"a: 1\n",
        bom + b"a: 1\n",
        bom + bom + b"a: x\n",
        b"a: \xff\n",
        bom + b"a: \xc3\n",
        bom + b"x\xe2\x82",
        bom + b"a: 1\nb: caf\xe9\n",
        b"a: 1\nb: caf\xe9\n",
    ]
    for data in cases:
        text, problem = L._decode(data, "u.yaml")
        try:
            want: str | None = data.decode("utf-8-sig")
            err = None
        except UnicodeDecodeError as e:
            want, err = None, e
        assert text == want
        if err is not None:
            # the codec counts from after a BOM; the finding names the file's byte, offset, line and column
            offset = err.start + (3 if data.startswith(bom) else 0)
            assert problem is not None and problem.loc is not None
            assert f"byte 0x{data[offset]:02x} at offset {offset} " in problem.message
            line_start = data.rfind(b"\n", 0, offset) + 1
            assert (problem.loc.line, problem.loc.column) == (
                data.count(b"\n", 0, offset) + 1,
                offset - line_start + 1,
            )


@pytest.mark.skipif(not os.path.exists("/proc/self/mounts"), reason="needs Linux /proc")
def test_a_file_longer_than_its_stat_size_is_read_whole() -> None:
    """``_load_file`` reads the size ``stat`` gave and then whatever the file grew by: a file whose content
    outgrows its ``st_size`` (Linux /proc files report 0) is read whole, as one read up to the limit did."""
    path = "/proc/self/mounts"
    assert os.stat(path).st_size == 0
    with open(path, "rb") as fh:
        text = fh.read()
    assert len(text) > 1
    got = L._load_file(path, 16 * 2**20)
    want = load_text(text, path)

    def shape(r: Any) -> Any:
        return [d.data for d in r.documents], [(f.rule, f.message, f.loc) for f in r.findings]

    assert shape(got) == shape(want)
    assert shape(got) != shape(load_text(text[:1], path))  # the content tells a whole read from a cut one
    small = L._load_file(path, 1)  # grew past the limit: refused as too big, not cut
    assert [f.rule for f in small.findings] == ["KV001"] and not small.documents


def test_read_upto_reads_what_one_read_of_limit_plus_one_bytes_reads() -> None:
    """``read_upto`` (the stat size, then what the file grew by) returns what ``fh.read(limit + 1)`` returns,
    whatever the stat size said: smaller (the file grew), equal or larger (it shrank), at and over the limit."""
    import io

    for n in range(0, 40):
        content = bytes(range(65, 65 + n))
        for limit in (0, 1, 5, 19, 20, 21, 39, 40, 100):
            for size in {0, 1, n - 1, n, n + 1, limit, limit + 3} - {-1}:
                want = io.BytesIO(content).read(limit + 1)
                assert L.read_upto(io.BytesIO(content), size, limit) == want, (n, limit, size)


def test_read_file_and_read_head_read_what_a_file_object_reads(tmp_path: Path) -> None:
    """``read_file`` (descriptor reads) returns what ``read_upto`` on ``open(path, "rb")`` returns, and
    ``read_head`` what ``open(path, "rb").read(n)`` returns: every stat size (stale smaller or larger), limit
    and length around one another; a missing file or a directory raises OSError as ``open`` does."""
    p = tmp_path / "f.yaml"
    for n in (0, 1, 2, 7, 20, 21, 40, 9000):
        content = bytes((65 + i % 26) for i in range(n))
        p.write_bytes(content)
        for limit in (0, 1, 5, 19, 20, 21, 39, 40, 100, 10000):
            for size in {0, 1, max(n - 1, 0), n, n + 1, limit, limit + 3}:
                with open(p, "rb") as fh:
                    want = L.read_upto(fh, size, limit)
                assert L.read_file(str(p), size, limit) == want, (n, limit, size)
        for k in (0, 1, n, n + 1, 2 * n + 5):
            with open(p, "rb") as fh:
                assert L.read_head(str(p), k) == fh.read(k), (n, k)
    for bad in (str(tmp_path / "missing.yaml"), str(tmp_path)):
        with pytest.raises(OSError):
            L.read_file(bad, 10, 100)
        with pytest.raises(OSError):
            L.read_head(bad, 10)


def test_read_fd_goes_on_after_a_short_read() -> None:
    """``_read_fd`` reads on after a read returns fewer bytes than asked, to ``n`` or the end, as a buffered
    file object's ``read(n)`` does: a pipe written in pieces, a moment apart, returns each piece as one short
    read."""
    import threading
    import time

    for pieces in ([b"abc", b"defg", b"h"], [b"x" * 5000, b"y" * 3], [b"one"]):
        for n in (1, 3, 4, 8, 100, 10000):
            r, w = os.pipe()

            def write(w: int = w, pieces: list[bytes] = pieces) -> None:
                for piece in pieces:
                    os.write(w, piece)
                    time.sleep(0.005)
                os.close(w)

            writer = threading.Thread(target=write)
            writer.start()
            try:
                got = L._read_fd(r, n)
            finally:
                writer.join()
                os.close(r)
            assert got == b"".join(pieces)[:n], (pieces, n)


def _inside(actions: list[tuple[int, int, str]], spans: list[Any]) -> list[bool]:
    """For each action, whether it starts inside one of ``spans`` (0-based ``((line, col), (line, col))``)."""
    return [any(s <= (line, col) < e for s, e in spans) for line, col, _ in actions]


def test_template_actions_inside_scalars_as_with_every_scalars_span() -> None:
    """_documents records the spans of the scalars whose text holds ``{{`` only: every action is found inside
    a scalar (or outside every scalar) exactly as with the span of every scalar PyYAML's parser reports."""
    texts = [t for _, t in _manifest_texts() if "{{" in t]
    texts += [
        "a: |\n  x {{ .Values.a }}\n  y\n{{- if .Values.b }}\nb: 1\n{{- end }}\n",
        "a: >-\n  {{ .Values.a }}\n\n  {{ .x }}\nb: '{{ .y }}'\nc: \"q {{ .z }}\"\n",
        "a: x{{ .y }}z # {{ .c }}\nb: [x, '{{ .y }}']\nk{{ .v }}: 1\n",
        "a: &n '{{ .Values.x }}'\nb: *n\nc: !!str '{{ .y }}'\nd: plain\n  continued {{ .z }}\n",
        "a:\n- {{ .Values.list }}\n",
        "a: 'one{\n{ .x }}'\nb: \"two{\\\n{ .y }}\"\n",
    ]
    checked = 0
    for text in texts:
        for _, seg in L._segments(text):
            actions = L.template_actions(seg)
            if not actions:
                continue
            try:
                ref = [
                    ((e.start_mark.line, e.start_mark.column), (e.end_mark.line, e.end_mark.column))
                    for e in yaml.parse(seg, Loader=yaml.SafeLoader)
                    if isinstance(e, yaml.ScalarEvent)
                ]
                ours = [sp for d in L._documents(seg, "f.yaml", 0, True) for sp in d.spans or ()]
            except yaml.YAMLError:
                continue  # a segment that does not parse gets KV002 whatever its scalars
            assert _inside(actions, ours) == _inside(actions, ref), seg
            checked += len(actions)
    assert checked > 30


def test_gc_paused_pauses_once_and_restores_on_error() -> None:
    """The loader's collector pause: disabled inside, a no-op when nested or already paused, re-enabled on
    the way out of the outer pause only, errors included."""
    import gc

    assert gc.isenabled()
    with L._gc_paused():
        assert not gc.isenabled()
        with L._gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled(), "the inner pause left the outer one alone"
    assert gc.isenabled()
    with pytest.raises(ValueError), L._gc_paused():
        raise ValueError("boom")
    assert gc.isenabled()
    gc.disable()
    try:
        with L._gc_paused():
            pass
        assert not gc.isenabled(), "a collector paused by the caller stays paused"
    finally:
        gc.enable()


def test_real_path_and_lstat_of_files_links_and_missing_paths(tmp_path: Path) -> None:
    """_realpath_stat gives os.path.realpath and, for a path that is not a symbolic link, the os.stat result
    (compared by inode, mode and size); for a link, a dangling link, a missing file, ``.`` and ``..`` no stat."""
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.yaml").write_text("a: 1\n")
    os.symlink(tmp_path / "d" / "a.yaml", tmp_path / "link.yaml")
    os.symlink(tmp_path / "gone.yaml", tmp_path / "dangling.yaml")
    os.symlink(tmp_path / "d", tmp_path / "dlink")
    real_dirs: dict[str, str] = {}
    for p in ["d/a.yaml", "link.yaml", "dangling.yaml", "missing.yaml", "dlink/a.yaml", "d", "d/.", "d/.."]:
        full = str(tmp_path / p) if not p.endswith(".") else os.path.join(str(tmp_path), p)
        key, st = L._realpath_stat(full, real_dirs)
        assert key == os.path.realpath(full), p
        assert key == L._realpath(full, real_dirs), p
        if os.path.islink(full) or not os.path.exists(full) or os.path.basename(full) in (".", ".."):
            assert st is None, p
        else:
            assert st is not None, p
            want = os.stat(full)
            assert (st.st_ino, st.st_mode, st.st_size) == (want.st_ino, want.st_mode, want.st_size), p
