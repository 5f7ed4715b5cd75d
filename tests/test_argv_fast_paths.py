"""The engine-command readers' fast paths give what their general paths give (issue 19, reading the command).

kvlint/engines/vllm.py builds the ``--config`` values of scalar nodes of the core tags straight from the node
(instead of serialising the node and loading it again), finds abbreviation candidates by bisection of the sorted option names, and answers
``--`` words as "not a number" without raising. Each is compared here with the general path it short-cuts, on
generated inputs and on what the shared corpus feeds it.
"""

from __future__ import annotations

import bisect
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from kvlint.engines import sglang as G
from kvlint.engines import vllm as V
from kvlint.engines.options import prefixed

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
CORPUS = SHARED / "corpus" / "manifests"


def _shape(node: Any) -> Any:
    """What kvlint reads of a node tree: tags, scalar values and styles, start positions, recursively."""
    if node is None:
        return None
    head = (type(node).__name__, node.tag, node.start_mark.line, node.start_mark.column)
    if isinstance(node, yaml.ScalarNode):
        return (
            *head,
            node.value,
            node.style or None,
        )  # plain: None from PyYAML, "" from libyaml (both falsy)
    if isinstance(node, yaml.MappingNode):
        return (*head, [(_shape(k), _shape(v)) for k, v in node.value])
    return (*head, [_shape(x) for x in node.value])


def _outcome(fn, *args) -> Any:
    try:
        return ("ok", fn(*args))
    except (yaml.YAMLError, ValueError) as exc:
        return ("error", type(exc).__name__, str(exc))


#: Values of a ``--config`` key: every form the YAML 1.1 resolvers know, quoting styles, block scalars,
#: flow and block collections, anchors, tags, and malformed text.
_VALUES = [
    "1",
    "-0",
    "+12",
    "0x1f",
    "0o17",
    "017",
    "0b101",
    "1_000",
    "190:20:30",
    "1e3",
    "1.0e+3",
    ".5",
    "1.",
    ".nan",
    ".inf",
    "-.inf",
    "yes",
    "No",
    "on",
    "OFF",
    "True",
    "~",
    "null",
    "NULL",
    "",
    '""',
    "''",
    "'a''b'",
    '"a: b"',
    '"\\x01"',
    '"é"',
    "é",
    '"\\t"',
    '"\\u2028"',
    "a  b",
    "2024-01-01",
    "=",
    "!!str 5",
    '!!int "5"',
    "!!binary aGk=",
    "!foo bar",
    "&a 3",
    "*a",
    "|\n  x\n  y",
    ">\n  x\n  y",
    "[1, 2]",
    "{a: 1}",
    "\n  - 1\n  - x",
    "\n  a: 1\n  b: [x]",
    "[1, [2",
    "{a",
    "'open",
    "\t1",
    "@x",
    "`x",
    "% x",
    "a # c",
    "0.95",
    "32k",
    "auto",
    '{"level": 3}',
    "meta-llama/Llama-3.1-8B-Instruct",
    "bfloat16",
    "\n  <<: {a: 1}\n  b: 2",
]


def _generated_configs(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    keys = [
        "model",
        "tensor-parallel-size",
        "max_model_len",
        "gpu-memory-utilization",
        "enable-prefix-caching",
        "served-model-name",
        "vllm",
        "dtype",
        "k",
        "x y",
        '"q"',
    ]
    out = []
    for _ in range(count):
        lines = []
        for _ in range(rng.randint(0, 6)):
            key = rng.choice(keys)
            lines.append(f"{'  ' if rng.random() < 0.05 else ''}{key}: {rng.choice(_VALUES)}")
        if rng.random() < 0.2:
            lines = ["vllm:"] + ["  " + line.replace("\n", "\n  ") for line in lines]
        if rng.random() < 0.1:
            lines.insert(0, rng.choice(["---", "%YAML 1.1\n---", "# comment", "- a", "plain text"]))
        out.append("\n".join(lines) + rng.choice(["", "\n", "\n...\n", "\n---\nb: 1\n"]))
    return out


def _corpus_configs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ``--config`` texts a check of the shared corpus reads."""
    from kvlint.checkrun import run_paths
    from kvlint.options import Options

    seen: list[str] = []
    real = V._config_argv
    V._CONFIG_READS.clear()  # files read by earlier tests would not be read again

    def spy(text: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(V, "_config_argv", spy)
    run_paths([str(CORPUS)], Options(allow_hub=False), no_config=True, keep_records=False, keep_json=False)
    return seen


def _check_config(text: str) -> None:
    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return
    if isinstance(root, yaml.MappingNode):
        for _, vnode in root.value:
            a = _outcome(V._node_value, vnode, True)
            b = _outcome(V._node_value, vnode, False)
            assert repr(a) == repr(b), (text, _shape(vnode))


def test_config_values_match_general_path_generated() -> None:
    texts = [f"k: {v}\n" for v in _VALUES] + _generated_configs(600, seed=19)
    for text in texts:
        _check_config(text)


def test_config_values_match_general_path_on_corpus(monkeypatch: pytest.MonkeyPatch) -> None:
    if not CORPUS.is_dir():
        pytest.skip("shared corpus not present")
    texts = _corpus_configs(monkeypatch)
    assert texts, "the corpus holds vLLM --config files (KubeAI models); none was read"
    for text in texts:
        _check_config(text)


def test_config_argv_fast_equals_round_trip(monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole ``--config`` reading (argv, positions, sources) is the same with the fast path off."""
    texts = _generated_configs(300, seed=7)
    got = [_outcome(V._config_argv, t, None, lambda line, col: (line, col)) for t in texts]
    # the general path: the serialise-and-load round trip for every value
    general = V._node_value
    monkeypatch.setattr(V, "_node_value", lambda n, fast=True: general(n, False))
    want = [_outcome(V._config_argv, t, None, lambda line, col: (line, col)) for t in texts]
    for text, g, w in zip(texts, got, want, strict=True):
        assert repr(g) == repr(w), text


def test_prefixed_matches_linear_scan() -> None:
    rng = random.Random(3)
    tables = [V._tables(v)[3] for v in (None, "0.4.3", "0.8.5", "0.33.0")]
    tables += [G._tables(v)[2] for v in (None, "0.4.6", "0.5.5", "99.0")]
    for names in tables:
        prefixes = {"--", "--m", "--max", "--max-model", "--no-", "--zzz", "-", "", "--a", "--tp", "--mem"}
        prefixes |= {n[: rng.randint(2, len(n))] for n in names}
        prefixes |= {n + "x" for n in rng.sample(names, 20)}
        for p in sorted(prefixes):
            assert prefixed(names, p) == [n for n in names if n.startswith(p)], p


def test_sglang_tables_memoised_equal_fresh() -> None:
    """The per-version SGLang tables, built once, are what building them again gives."""
    from kvlint.engines.sglang_flags_data import VERSIONS

    for v in [None, "", "0.0.1", "99.0", "0.5.5rc1", "not-a-version", *VERSIONS]:
        table, report, known = G._tables(v)
        fresh_table, fresh_report = G.sglang_options.__wrapped__(v)
        assert (table, report) == (fresh_table, fresh_report), v
        assert known == sorted(set(fresh_table) | set(G._ALIASES)), v


def test_is_number_matches_float() -> None:
    def reference(tok: str) -> bool:
        try:
            float(tok)
            return True
        except ValueError:
            return False

    rng = random.Random(5)
    alphabet = "-+.0123456789eEinfatyINFAN_ x"
    tokens = ["--1", "-1", "--", "-", "-.5", "-inf", "--inf", "-nan", "-1e5", "-1_0", " -1", "- 1", "--port"]
    tokens += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6))) for _ in range(20000)]
    for tok in tokens:
        assert V._is_number(tok) == reference(tok), tok


def test_bisect_is_the_sort_order_of_long_names() -> None:
    """prefixed() relies on the option names being sorted in str order."""
    names = V._tables(None)[3]
    assert names == sorted(names)
    assert bisect.bisect_left(names, "--") == 0


# -- the shell reader -------------------------------------------------------------------------------

#: Pieces shell scripts are made of: words, quotes, expansions, operators, comments, redirections,
#: continuations, template actions, and broken forms (unbalanced quotes and brackets).
_SHELL_PIECES = [
    "vllm",
    "serve",
    "--port",
    "8000",
    "--model=x",
    "python3",
    "-m",
    "sglang.launch_server",
    "a#b",
    "#c\n",
    " ",
    "  ",
    "\t",
    "\r",
    "\n",
    ";",
    ";;",
    "&&",
    "||",
    "|",
    "&",
    "(",
    ")",
    "((i=1))",
    "'q w'",
    "'",
    '"',
    '"a $B c"',
    '"${X:-d}"',
    '"\\"x\\""',
    "\\\n",
    "\\",
    "\\x",
    "$X",
    "${Y}",
    "${Z:-dflt}",
    "$@",
    '"$@"',
    "$1",
    "$(cmd a 'b)' \"c(\")",
    "$((1+2))",
    "$(",
    "${",
    "`date`",
    "`",
    "2>&1",
    ">log",
    ">>",
    "<in",
    "<&0",
    "X=1",
    "export A=$B",
    "env -i K=v",
    "eval",
    "exec",
    "{{ .Values.x }}",
    "{{",
    "}}",
    "$",
    "$$",
    "$#",
    "é",
    "x=(a b)",
]


def _generated_scripts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(_SHELL_PIECES) for _ in range(rng.randint(0, 30))) for _ in range(count)]


def _corpus_scripts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ``sh -c`` scripts a check of the shared corpus reads."""
    from kvlint.checkrun import run_paths
    from kvlint.engines import command as C
    from kvlint.options import Options

    seen: list[str] = []
    real = C.commands

    def spy(script: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(script)
        return real(script, *args, **kwargs)

    monkeypatch.setattr(C, "commands", spy)
    run_paths([str(CORPUS)], Options(allow_hub=False), no_config=True, keep_records=False, keep_json=False)
    return seen


def _check_shell(script: str) -> None:
    from kvlint.engines import shell as S

    fast = S.lex(script)  # the lexer itself is compared with the reference in tests/test_shell_oracle.py
    env = {"B": "b1 b2", "X": "x", "Y": "", "Q": '"q"'}
    positional = [S.ShellArg("sh"), S.ShellArg("p1"), S.ShellArg("p 2", quoted=True)]
    for tok in fast:
        if isinstance(tok, S.Word):
            for assign in (False, True):
                a = S._expand(tok, env, positional, assign=assign)
                b = S._expand(tok, env, positional, assign=assign, fast=False)
                assert a == b, (script, tok)
    for opening, closing in ("()", "{}"):
        for i, c in enumerate(script):
            if c == opening:
                got = S._scan_balanced(script, i, opening, closing)
                assert got == S._scan_balanced_walk(script, i, opening, closing), (script, i)


def test_shell_fast_paths_match_general_paths_generated() -> None:
    for script in _generated_scripts(3000, seed=19):
        _check_shell(script)


def test_shell_fast_paths_match_general_paths_on_corpus(monkeypatch: pytest.MonkeyPatch) -> None:
    if not CORPUS.is_dir():
        pytest.skip("shared corpus not present")
    scripts = _corpus_scripts(monkeypatch)
    assert len(scripts) >= 10, "the corpus holds sh -c scripts; too few were read"
    for script in scripts:
        _check_shell(script)


def test_shell_prechecks_are_implied_by_the_patterns() -> None:
    """commands() tries the redirection pattern only on words holding ``<`` or ``>``, and the assignment
    pattern only on words holding ``=``: every word either pattern matches holds them."""
    from kvlint.engines import shell as S

    rng = random.Random(11)
    alphabet = "0129<>&=aZ_- $\n"
    words = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 7))) for _ in range(30000)]
    for w in words:
        if S._REDIRECT_RE.match(w):
            assert "<" in w or ">" in w, w
        if S._ASSIGN_RE.match(w):
            assert "=" in w, w


def test_base_is_posix_basename() -> None:
    import posixpath

    from kvlint.engines.command import _base

    rng = random.Random(2)
    words = ["", "/", "a/", "/usr/bin/python3", "vllm", "./run.sh", "//x//y", "a\\b"]
    words += ["".join(rng.choice("ab/.\\") for _ in range(rng.randint(0, 8))) for _ in range(5000)]
    for w in words:
        assert _base(w) == posixpath.basename(w), w


# -- finding workloads ------------------------------------------------------------------------------


def _same_tree(a: Any, b: Any) -> None:
    """``b`` equals ``a`` with the same positions (``loc``, ``locs``, ``key_locs``), in new containers."""
    from kvlint.source import LDict, LList

    assert (
        type(a) is type(b)
        or (isinstance(a, dict) and type(b) is LDict)
        or (isinstance(a, list) and type(b) is LList)
    )
    if isinstance(a, dict):
        assert a is not b and list(a) == list(b)
        assert getattr(a, "loc", None) == b.loc
        if isinstance(a, LDict):
            assert a.locs == b.locs and a.key_locs == b.key_locs
        for k in a:
            _same_tree(a[k], b[k])
    elif isinstance(a, list):
        assert a is not b and len(a) == len(b)
        assert getattr(a, "loc", None) == b.loc
        if isinstance(a, LList) and len(a.locs) == len(a):
            assert a.locs == b.locs
        for x, y in zip(a, b, strict=True):
            _same_tree(x, y)
    else:
        assert a is b


def test_merge_copy_keeps_values_and_positions_on_corpus() -> None:
    """kvlint.workloads.merge._copy (scalars no longer passed through a call; the LDict test hoisted out of
    the key loop) still copies every loaded document of the corpus with all its positions."""
    if not CORPUS.is_dir():
        pytest.skip("shared corpus not present")
    from kvlint.load import load_paths
    from kvlint.workloads.merge import _copy

    docs = load_paths([str(CORPUS)]).documents
    assert len(docs) > 100
    for doc in docs:
        _same_tree(doc.data, _copy(doc.data))
    plain = {"a": [1, {"b": None}], "c": {"d": "x"}}
    _same_tree(plain, _copy(plain))


def _reference_field_paths(obj: Any, type_name: str, path: str = "") -> Any:
    """KV005's walk as a plain recursive generator (what kvlint.workloads.fields did before it filled a list)."""
    from kvlint.source import loc_of
    from kvlint.workloads.fields import _nested_fields, known_fields, unknown_fields

    if not known_fields(type_name) or not isinstance(obj, dict):
        return
    for key, close in unknown_fields(obj, type_name):
        yield path, key, close, getattr(obj, "key_locs", {}).get(key) or loc_of(obj, key)
    nested = _nested_fields(type_name)
    for _, child, key in sorted([(*nested[k], k) for k in obj if k in nested]):
        value = obj.get(key)
        if value is None:
            continue
        sub = f"{path}.{key}" if path else key
        for i, item in enumerate(value) if isinstance(value, list) else [(None, value)]:
            yield from _reference_field_paths(item, child, sub if i is None else f"{sub}[{i}]")


def test_unknown_field_paths_match_reference_walk() -> None:
    from kvlint.load import load_paths
    from kvlint.workloads.fields import unknown_field_paths

    rng = random.Random(23)
    keys = [
        "name",
        "image",
        "args",
        "args:",
        "resource",
        "resources",
        "env",
        "ports",
        "livenessProbe",
        "httpGet",
        "port",
        "path",
        "limits",
        "volumeMounts",
        "mountPath",
        "securityContext",
        "capabilities",
        "add",
        "$patch",
        "readinessProbe",
        "exec",
        "command",
        "valueFrom",
        "configMapKeyRef",
        "key",
    ]

    def gen(depth: int) -> Any:
        if depth > 4 or rng.random() < 0.3:
            return rng.choice(["x", 1, None, True])
        if rng.random() < 0.3:
            return [gen(depth + 1) for _ in range(rng.randint(0, 3))]
        return {rng.choice(keys): gen(depth + 1) for _ in range(rng.randint(0, 5))}

    objs: list[Any] = [gen(0) for _ in range(3000)]
    if CORPUS.is_dir():
        for doc in load_paths([str(CORPUS)]).documents:
            stack = [doc.data]
            while stack:  # every mapping of the corpus that has a "containers" list: its containers
                node = stack.pop()
                if isinstance(node, dict):
                    objs += [
                        c for c in node.get("containers") or [] if isinstance(node.get("containers"), list)
                    ]
                    stack += list(node.values())
                elif isinstance(node, list):
                    stack += node
    for obj in objs:
        for type_name in ("V1Container", "V1PodSpec", "Probe"):
            assert list(unknown_field_paths(obj, type_name)) == list(_reference_field_paths(obj, type_name))


def _corpus_containers(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The containers a check of the shared corpus reads."""
    import kvlint.engines as E
    from kvlint.checkrun import run_paths
    from kvlint.engines import command as C
    from kvlint.options import Options

    seen: list[Any] = []
    real = C.parse_container

    def spy(container: Any, **kwargs: Any) -> Any:
        seen.append(container)
        return real(container, **kwargs)

    monkeypatch.setattr(C, "parse_container", spy)
    monkeypatch.setattr(E, "parse_container", spy)
    run_paths([str(CORPUS)], Options(allow_hub=False), no_config=True, keep_records=False, keep_json=False)
    return seen


def test_items_of_fast_path_matches_steps_on_corpus(monkeypatch: pytest.MonkeyPatch) -> None:
    from kvlint.engines import command as C

    if not CORPUS.is_dir():
        pytest.skip("shared corpus not present")
    containers = _corpus_containers(monkeypatch)
    assert len(containers) >= 50
    for c in containers:
        env, _ = C.container_env(c)
        for key in ("command", "args"):
            assert C._items_of(c, key, env) == C._items_of(c, key, env, fast=False), (c, key)


def test_items_of_fast_path_matches_steps_generated() -> None:
    from kvlint.engines import command as C
    from kvlint.source import LDict, LList, Loc

    rng = random.Random(5)
    pool: list[Any] = [
        "vllm",
        "serve",
        "--x=$(A)",
        "$(B)",
        "$$",
        "a$",
        None,
        True,
        3,
        2.5,
        {"k": 1},
        ["l"],
        "",
    ]
    env = {"A": "a", "B": "b c"}
    for _ in range(3000):
        items = [rng.choice(pool) for _ in range(rng.randint(0, 5))]
        seq = LList(items, loc=Loc("f", 1, 1))
        # positions for every item, for some, or none (a list built by an operator)
        k = rng.choice([len(items), len(items), max(0, len(items) - 1), 0])
        seq.locs = [Loc("f", 2 + i, 3) for i in range(k)]
        container = LDict({"args": seq}, loc=Loc("f", 1, 1))
        container.locs["args"] = Loc("f", 1, 7)
        assert C._items_of(container, "args", env) == C._items_of(container, "args", env, fast=False), items


def test_a_long_config_value_is_not_emitted_and_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A --config list of 300,000 items (600 kB) took 5 of its 10 CPU s per container in the round trip of its value
    (emitted and parsed again by PyYAML's pure-Python emitter and loader). Counted: no node is emitted, and the
    value is read whole, as vLLM's yaml.safe_load reads it."""
    emitted = []
    serialize_node = yaml.serializer.Serializer.serialize_node

    def emitting(self, node, parent, index):  # type: ignore[no-untyped-def]
        emitted.append(1)
        return serialize_node(self, node, parent, index)

    monkeypatch.setattr(yaml.serializer.Serializer, "serialize_node", emitting)
    text = "model: m\nserved-model-name: [" + ", ".join(f"n{i}" for i in range(3000)) + "]\nx: {a: [1, 2]}\n"
    argv, _, _ = V._config_argv(text, None, lambda line, col: None)
    assert argv[:3] == ["--model", "m", "--served-model-name"] and argv[3:3003] == [
        f"n{i}" for i in range(3000)
    ]
    assert argv[3003:] == ["--x", '{"a": [1, 2]}']
    assert yaml.safe_load(text)["served-model-name"] == argv[3:3003]
    assert not emitted
