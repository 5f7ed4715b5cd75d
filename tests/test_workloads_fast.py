"""Workload finding made cheaper (issue 19), compared with the rules it replaced, kept here:

* kvlint/workloads/merge.py ``strategic_merge`` copies each value once; its results must be those of the
  plain rule: copy the whole base, then merge every key the patch sets into that copy (``_reference``),
  with the same values, key order and positions (``loc``, ``locs``, ``key_locs``), on the merges the corpus
  and fixtures make (LLMInferenceService presets, KServe runtimes) and on random trees;
* kvlint/workloads/find.py ``_structural`` is a plain recursion; it must find the workloads the generator
  walk found (``_reference_structural``), in the same order, on every document of the corpus and fixtures."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from kvlint.load import load_text
from kvlint.source import LDict, LList, Loc, loc_of
from kvlint.types import Document, Workload
from kvlint.workloads.base import (
    LWS_TEMPLATE_KEYS,
    enclosing_context,
    is_pod_spec,
    make_workload,
    path_str,
    synthetic_pod_spec,
    with_injected_env,
)
from kvlint.workloads.find import _NO_DESCEND, _structural
from kvlint.workloads.lws import lws_env, lws_fields
from kvlint.workloads.merge import MERGE_KEYS, _copy, strategic_merge

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "manifests"


def _reference(base: Any, patch: Any, field: str = "") -> Any:
    """The rule before issue 19: the whole base copied, then each patched key merged over the copy."""
    if isinstance(base, dict) and isinstance(patch, dict):
        out = _copy(base)
        for k, v in patch.items():
            if v is None:
                out.pop(k, None)
                continue
            out[k] = _reference(base.get(k), v, str(k)) if k in base else _copy(v)
            loc = loc_of(patch, k)
            if loc is not None:
                out.locs[k] = loc
            if isinstance(patch, LDict) and k in patch.key_locs:
                out.key_locs[k] = patch.key_locs[k]
        return out
    if isinstance(base, list) and isinstance(patch, list) and field in MERGE_KEYS:
        key = MERGE_KEYS[field]
        if all(isinstance(x, dict) and key in x for x in patch) and all(
            isinstance(x, dict) and key in x for x in base
        ):
            merged = _copy(base)
            index = {str(x[key]): i for i, x in enumerate(merged)}
            for j, item in enumerate(patch):
                i = index.get(str(item[key]))
                if i is None:
                    merged.append(_copy(item))
                    merged.locs.append(loc_of(patch, j) or merged.loc or Loc("-"))
                    index[str(item[key])] = len(merged) - 1
                else:
                    merged[i] = _reference(merged[i], item, "")
            return merged
    return _copy(patch)


def _same(a: Any, b: Any, where: str = "") -> None:
    assert type(a) is type(b), where
    if isinstance(a, dict):
        assert list(a) == list(b), where
        if isinstance(a, LDict):
            assert (a.loc, a.locs, a.key_locs) == (b.loc, b.locs, b.key_locs), where
            assert list(a.locs) == list(b.locs), where
        for k in a:
            _same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), where
        if isinstance(a, LList):
            assert (a.loc, a.locs) == (b.loc, b.locs), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{where}[{i}]")
    else:
        assert a == b, where


def _specs() -> list[Any]:
    """The ``spec`` of every document of the corpus and fixtures that has one (pods, presets, services)."""
    out: list[Any] = []
    roots = [ROOT / "fixtures", CORPUS] if CORPUS.is_dir() else [ROOT / "fixtures"]
    for root in roots:
        for p in sorted(root.rglob("*.yaml")):
            text = p.read_text(errors="replace")
            if (
                "LLMInferenceService" not in text
                and "ServingRuntime" not in text
                and "containers" not in text
            ):
                continue
            for d in load_text(text, str(p)).documents:
                spec = d.data.get("spec") if isinstance(d.data, dict) else None
                if isinstance(spec, dict):
                    out.append(spec)
    return out


def test_merges_of_the_corpus_equal_the_reference() -> None:
    specs = _specs()
    assert len(specs) > 50
    rng = random.Random(19)
    pairs = [(a, b) for a, b in zip(specs, specs[1:], strict=False)]
    pairs += [(rng.choice(specs), rng.choice(specs)) for _ in range(300)]
    for base, patch in pairs:
        _same(strategic_merge(base, patch), _reference(base, patch))
        _same(
            strategic_merge(LDict(loc=Loc("x.yaml", 1, 1)), base),
            _reference(LDict(loc=Loc("x.yaml", 1, 1)), base),
        )


def _tree(rng: random.Random, depth: int) -> Any:
    """A random value: LDict/LList (with positions, some missing) or plain dict/list, containers lists merged on
    ``name`` (with repeated names), nulls that remove keys, scalars."""
    r = rng.random()
    if depth <= 0 or r < 0.3:
        return rng.choice([None, 0, 1, "a", "b", True, "{{ x }}"])
    loc = Loc(f"f{rng.randint(0, 2)}.yaml", rng.randint(1, 40), rng.randint(1, 9))
    if r < 0.55:
        plain = rng.random() < 0.2
        out: Any = {} if plain else LDict(loc=loc if rng.random() < 0.8 else None)
        for _ in range(rng.randint(0, 4)):
            k = rng.choice(["containers", "env", "volumeMounts", "args", "a", "b", "c", "ports"])
            out[k] = _tree(rng, depth - 1)
            if not plain and rng.random() < 0.7:
                out.locs[k] = Loc(loc.file, loc.line + 1, 3)
            if not plain and rng.random() < 0.5:
                out.key_locs[k] = Loc(loc.file, loc.line + 1, 1)
        return out
    n = rng.randint(0, 3)
    if rng.random() < 0.6:  # items with a merge key
        items: list[Any] = []
        for _ in range(n):
            item = LDict(loc=loc)
            item["name"] = rng.choice(["x", "y", "z"])
            item["mountPath"] = rng.choice(["/a", "/b"])
            item["containerPort"] = rng.choice([80, 8000])
            item["value"] = _tree(rng, depth - 1)
            items.append(item)
    else:
        items = [_tree(rng, depth - 1) for _ in range(n)]
    if rng.random() < 0.2:
        return items
    out_l = LList(items, loc=loc)
    out_l.locs = [Loc(loc.file, loc.line + i, 5) for i in range(len(items) - rng.randint(0, 1))]
    return out_l


def test_random_trees_equal_the_reference() -> None:
    rng = random.Random(1919)
    for _ in range(3000):
        base, patch = _tree(rng, 4), _tree(rng, 4)
        field = rng.choice(["", "containers", "env", "volumeMounts", "ports", "args"])
        _same(strategic_merge(base, patch, field), _reference(base, patch, field))


def _reference_structural(doc: Document) -> list[Workload]:
    """The generator walk before issue 19."""
    chain: list[Any] = []

    def walk(node: Any, depth: int) -> Any:
        if depth > 256:
            return
        if isinstance(node, dict):
            if is_pod_spec(node):
                replicas, role, group_size = enclosing_context(chain)
                ps = node
                if (
                    group_size is not None
                    and isinstance(node, LDict)
                    and any(k in LWS_TEMPLATE_KEYS for _, k in chain)
                ):
                    ps = with_injected_env(
                        node,
                        lws_env(group_size, role),
                        lws_fields(group_size, role),
                        init_containers=True,
                        operator_first=True,
                    )
                yield make_workload(doc, ps, chain, replicas=replicas, role=role, group_size=group_size)
            else:
                runner = node.get("runner")
                if isinstance(runner, dict) and "image" in runner:
                    replicas, role, group_size = enclosing_context(chain)
                    ps = synthetic_pod_spec(node, runner, ("runner",))
                    path = path_str([k for _, k in chain] + ["runner"])
                    yield make_workload(
                        doc, ps, chain, path=path, replicas=replicas, role=role, group_size=group_size
                    )
            for k, v in node.items():
                if k in _NO_DESCEND or k == "runner" or not isinstance(v, (dict, list)):
                    continue
                chain.append((node, k))
                yield from walk(v, depth + 1)
                chain.pop()
        elif isinstance(node, list):
            for i, v in enumerate(node):
                if isinstance(v, (dict, list)):
                    chain.append((node, i))
                    yield from walk(v, depth + 1)
                    chain.pop()

    return list(walk(doc.data, 0))


def test_structural_walk_equals_the_generator_walk() -> None:
    roots = [ROOT / "fixtures", CORPUS] if CORPUS.is_dir() else [ROOT / "fixtures"]
    found = 0
    for root in roots:
        for p in sorted(root.rglob("*.y*ml")):
            for d in load_text(p.read_bytes(), str(p)).documents:
                if not isinstance(d.data, dict):
                    continue
                got, want = _structural(d), _reference_structural(d)
                found += len(want)
                assert len(got) == len(want), p
                for a, b in zip(got, want, strict=True):
                    assert (a.path, a.kind, a.name, a.namespace, a.replicas, a.role, a.group_size) == (
                        b.path, b.kind, b.name, b.namespace, b.replicas, b.role, b.group_size
                    ), p  # fmt: skip
                    assert (a.labels, a.annotations, a.loc) == (b.labels, b.annotations, b.loc), p
                    _same(a.pod_spec, b.pod_spec, str(p))
    assert found > 100


def _reference_copy(value: Any) -> Any:
    """merge._copy before positions were copied packed: every position unpacked, containers made by LDict()."""
    if isinstance(value, dict):
        out = LDict(loc=loc_of(value))
        if isinstance(value, LDict):
            locs, key_locs = value.locs, value.key_locs
            for k, v in value.items():
                out[k] = _reference_copy(v) if isinstance(v, (dict, list)) else v
                if k in locs:
                    out.locs[k] = locs[k]
                if k in key_locs:
                    out.key_locs[k] = key_locs[k]
        else:
            for k, v in value.items():
                out[k] = _reference_copy(v) if isinstance(v, (dict, list)) else v
        return out
    if isinstance(value, list):
        out_l = LList([_reference_copy(v) for v in value], loc=loc_of(value))
        out_l.locs = list(value.locs) if isinstance(value, LList) else []
        if len(out_l.locs) != len(out_l):
            out_l.locs = [loc_of(value, i) or out_l.loc or Loc("-") for i in range(len(out_l))]
        return out_l
    return value


def _shares_nothing(a: Any, b: Any) -> None:
    if isinstance(a, (dict, list)):
        assert a is not b
        for x, y in (
            zip(a.values(), b.values(), strict=True) if isinstance(a, dict) else zip(a, b, strict=True)
        ):
            _shares_nothing(x, y)


def _read_some_positions(value: Any, rng: random.Random) -> None:
    """Unpack the positions of some containers of ``value`` (as readers do), leaving the others packed."""
    if isinstance(value, LDict):
        if rng.random() < 0.3:
            _ = value.locs
        if rng.random() < 0.3:
            _ = value.key_locs
        for v in value.values():
            _read_some_positions(v, rng)
    elif isinstance(value, LList):
        if rng.random() < 0.3:
            _ = value.locs
        for v in value:
            _read_some_positions(v, rng)


def test_copies_keep_positions_packed_and_read_as_the_reference() -> None:
    """_copy of loaded values (positions packed, some read, as readers leave them) and of built trees: the
    values, types, key order, loc, locs and key_locs of the unpacking copy; no container shared with the
    source; a loaded value's positions stay packed in the copy until read."""
    rng = random.Random(7)
    specs = _specs()
    assert len(specs) > 50
    fresh = _specs()
    got = _copy(fresh[0])
    assert got._locs is None and got._key_locs is None, "a packed value's copy is packed"
    for i, spec in enumerate(fresh):
        if i % 2:
            _read_some_positions(spec, rng)
        copied = _copy(spec)
        _shares_nothing(copied, spec)
        _same(copied, _reference_copy(specs[i]))
        _same(copied, spec)
    for _ in range(3000):
        tree = _tree(rng, 4)
        _same(_copy(tree), _reference_copy(tree))


def _nodes(value: Any) -> list[int]:
    """The ids of every dict and list in ``value`` (itself included)."""
    out: list[int] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            out.append(id(v))
            stack.extend(v.values())
        elif isinstance(v, list):
            out.append(id(v))
            stack.extend(v)
    return out


def _owned(value: Any) -> Any:
    """A tree a caller owns as llmisvc_workloads does: a ``relocate`` copy or a previous merge's result
    (LDict/LList everywhere, every list's ``locs`` complete)."""
    return _copy(value)


def test_reusing_a_given_away_side_merges_as_copying_it() -> None:
    """``reuse_base`` / ``reuse_patch`` (a tree the caller gives away is not copied again): the same result,
    values and positions, as the copying merge; a side that is not given away is left as it was, and the
    result shares none of its dicts or lists (llmisvc renders the result in place)."""
    rng = random.Random(1920)
    specs = _specs()
    pairs: list[tuple[Any, Any, str]] = [
        (_tree(rng, 4), _tree(rng, 4), rng.choice(["", "containers", "env", "volumeMounts", "ports", "args"]))
        for _ in range(2000)
    ]
    pairs += [(rng.choice(specs), rng.choice(specs), "") for _ in range(200)]
    for base, patch, field in pairs:
        for reuse_base in (False, True):
            for reuse_patch in (False, True):
                # a given-away side is such a tree; the copying merge of the same trees is the reference
                b0 = _owned(base) if reuse_base else base
                p0 = _owned(patch) if reuse_patch else patch
                want = strategic_merge(b0, p0, field)
                b = _owned(b0) if reuse_base else b0
                p = _owned(p0) if reuse_patch else p0
                b_before, p_before = _copy(b), _copy(p)
                got = strategic_merge(b, p, field, reuse_base=reuse_base, reuse_patch=reuse_patch)
                _same(got, want, f"reuse {reuse_base} {reuse_patch}")
                result_nodes = set(_nodes(got))
                if not reuse_base:
                    _same(_copy(b), b_before, "base changed")
                    assert not result_nodes & set(_nodes(b))
                if not reuse_patch:
                    _same(_copy(p), p_before, "patch changed")
                    assert not result_nodes & set(_nodes(p))


def test_llmisvc_leaves_its_inputs_and_the_shipped_presets_as_they_were() -> None:
    """llmisvc_workloads merges over a tree it owns and renders it in place: the service, its configs and
    kvlint's cached copies of KServe's presets are not changed, so a second read gives the same pods."""
    from kvlint.workloads.llmisvc import PRESETS, _builtin, llmisvc_workloads

    paths = sorted((ROOT / "fixtures" / "collected").rglob("*.yaml"))
    docs = [
        d
        for p in paths
        if "LLMInferenceService" in p.read_text(errors="replace")
        for d in load_text(p.read_text(errors="replace"), str(p)).documents
    ]
    services = [d for d in docs if d.kind == "LLMInferenceService"]
    assert len(services) >= 4
    presets_before = {s: _copy(_builtin(s)) for s in PRESETS if _builtin(s) is not None}
    assert presets_before
    docs_before = [_copy(d.data) for d in docs]
    builtin_used = 0
    for doc in services:
        first, _ = llmisvc_workloads(doc, docs)
        second, _ = llmisvc_workloads(doc, docs)
        assert len(first) == len(second)
        for a, b in zip(first, second, strict=True):
            _same(a.pod_spec, b.pod_spec, doc.name)
            assert not set(_nodes(a.pod_spec)) & set(_nodes(b.pod_spec))
            builtin_used += a.image_source is not None  # a shipped preset was merged in
    assert builtin_used
    for s, before in presets_before.items():
        _same(_builtin(s), before, s)
    for d, before in zip(docs, docs_before, strict=True):
        _same(d.data, before, d.name)


def _reference_leader(heads: list[Workload], w: Workload) -> Workload:
    """The rule link_leaders replaced: the head whose path shares the longest prefix with the worker's, the
    first among equals (``max`` keeps the first maximum), found by comparing every head."""

    def shared(h: Workload) -> int:
        n = 0
        for a, b in zip(h.path, w.path, strict=False):
            if a != b:
                break
            n += 1
        return n

    return max(heads, key=shared)


def test_link_leaders_equals_comparing_every_head() -> None:
    """link_leaders finds each worker's head without comparing it with every head (a DisaggregatedSet of
    thousands of leader/worker roles took seconds, quadratic, before the webhook's review cap); it must pick
    the head the every-head comparison picked, on random paths with shared prefixes, ties and duplicates, and
    on every document of the corpus and fixtures."""
    from kvlint.workloads.find import link_leaders

    doc = Document("x.yaml", 0, LDict(), Loc("x.yaml", 1, 1))
    rng = random.Random(12)
    words = ["spec", "roles", "[0]", "[1]", "[10]", "leader", "worker", "template", ".", "a", "ab", ""]
    for _ in range(300):
        ws = []
        for _ in range(rng.randint(1, 40)):
            path = "".join(rng.choice(words) for _ in range(rng.randint(0, 6)))
            role = rng.choice(["leader", "head", "worker", "worker", None])
            ws.append(Workload(doc, "X", "x", None, LDict(), path, role=role))
        heads = [w for w in ws if w.role in ("leader", "head")]
        got = link_leaders(ws)
        for w, g in zip(ws, got, strict=True):
            want = _reference_leader(heads, w) if heads and w.role == "worker" else None
            assert g.leader is want, (w.path, [h.path for h in heads])
    roots = [ROOT / "fixtures", CORPUS] if CORPUS.is_dir() else [ROOT / "fixtures"]
    for path in (p for root in roots for p in sorted(root.rglob("*.y*ml"))):
        for d in load_text(path.read_bytes(), str(path)).documents:
            if not isinstance(d.data, dict):
                continue
            ws = _structural(d)
            heads = [w for w in ws if w.role in ("leader", "head")]
            for w, g in zip(ws, link_leaders(ws), strict=True):
                if heads and w.role == "worker" and w.leader is None:
                    assert g.leader is _reference_leader(heads, w), (path, w.path)


def test_a_limit_counts_past_it_and_builds_the_same_first_workloads() -> None:
    """With the webhook's review cap as ``limit``, an object of more pod templates is only counted past the
    first ``limit + 1`` (a 3 MiB object took 0.9 s to build before being refused): the count, and the first
    ``limit + 1`` workloads (where the "too large to review" error is located), are those found without it;
    an object within the limit is found exactly as without it."""
    from kvlint.workloads import find_workloads

    pod = "{containers: [{name: m, image: vllm/vllm-openai:v0.11.0}]}"
    roles = "".join(
        f"  - {{name: r{i}, spec: {{leaderWorkerTemplate: {{size: 2, leaderTemplate: {{spec: {pod}}}, "
        f"workerTemplate: {{spec: {pod}}}}}}}}}\n"
        for i in range(40)
    )
    text = f"apiVersion: disaggregatedset.x-k8s.io/v1\nkind: DisaggregatedSet\nmetadata: {{name: d}}\nspec:\n  roles:\n{roles}"
    docs = load_text(text, "d.yaml").documents
    full = find_workloads(docs)
    assert len(full) == 80
    for limit in (0, 1, 10, 79):
        capped = find_workloads(docs, limit=limit)
        assert len(capped) == len(full)
        for a, b in zip(capped[: limit + 1], full[: limit + 1], strict=True):
            assert (a.path, a.loc, a.kind, a.name, a.role) == (b.path, b.loc, b.kind, b.name, b.role)
    for limit in (80, 1000):
        within = find_workloads(docs, limit=limit)
        assert [(w.path, w.loc, w.leader and w.leader.path) for w in within] == [
            (w.path, w.loc, w.leader and w.leader.path) for w in full
        ]
