"""Findings held compactly until the report (kvlint/diagstore.py): what :func:`kvlint.diagstore.finish` returns
is what the list path gives (comment suppressions, then :func:`kvlint.pipeline._dedupe_sorted`), also when
every diagnostic is encoded and when hashes collide; a streamed check with tiny chunks reports byte for byte
what the whole-input pipeline reports."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kvlint import diagstore
from kvlint.checkrun import run_paths
from kvlint.diagstore import DiagnosticStore, DiagnosticView, finish
from kvlint.options import Options
from kvlint.pipeline import _dedupe_sorted, configure, run_check
from kvlint.report import render
from kvlint.source import Loc
from kvlint.suppress import apply_comment_suppressions, may_have_comments
from kvlint.types import Diagnostic, LoadResult

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "manifests"

COMMENTED = """\
a: 1
b: 2  # kvlint: ignore KV104=the cache is sized by the operator
# kvlint: ignore KV202=checked by hand
c: 3
d: 4  # kvlint: ignore KV104
e: 5
"""


def _diagnostics(rng: random.Random, files: list[str], n: int) -> list[Diagnostic]:
    rules = ["KV104", "KV202", "KV003", "KV501", "KV301"]
    out: list[Diagnostic] = []
    for _ in range(n):
        if out and rng.random() < 0.15:  # the same finding again (de-duplicated), with another remedy
            d = rng.choice(out)
            out.append(
                Diagnostic(d.rule, d.severity, d.message, d.loc, fix=d.fix + " again", object=d.object)
            )
            continue
        f = rng.choice(files)
        loc = None if f is None else Loc(f, rng.randint(1, 6), rng.randint(1, 3))
        out.append(
            Diagnostic(
                rng.choice(rules),
                rng.choice(["error", "warning", "info"]),
                f"finding {rng.randint(0, 9)}: {rng.randint(0, 3)} GiB short",
                loc,
                fix=rng.choice(["", "set --max-model-len 4096"]),
                object=rng.choice(["", "Deployment/ns/a", "Deployment/ns/b"]),
                container=rng.choice(["", "vllm"]),
            )
        )
    return out


def _setup(tmp_path: Path) -> tuple[list[str | None], LoadResult]:
    read_with_comments = tmp_path / "a.yaml"
    read_without = tmp_path / "b.yaml"
    not_read = tmp_path / "c.yaml"  # a template a finding was mapped to: read from disk by the suppression
    for p in (read_with_comments, not_read):
        p.write_text(COMMENTED)
    read_without.write_text(COMMENTED.replace("kvlint:", "other:"))
    loaded = LoadResult()
    loaded.source_texts[str(read_with_comments)] = COMMENTED
    loaded.read_paths |= {str(read_with_comments), str(read_without)}
    files: list[str | None] = [str(read_with_comments), str(read_without), str(not_read), "x.json", "-", None]
    return files, loaded


@pytest.mark.parametrize("plain", [0, 4096])
@pytest.mark.parametrize("seed", range(6))
def test_finish_equals_the_list_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, plain: int
) -> None:
    monkeypatch.setattr(diagstore, "CHUNK", 7)
    monkeypatch.setattr(diagstore, "PLAIN", plain)
    files, loaded = _setup(tmp_path)
    options = Options(allow_hub=False)
    rng = random.Random(seed)
    first, second = _diagnostics(rng, files, 150), _diagnostics(rng, files, 120)

    kept, suppressed, notes = apply_comment_suppressions(first + second, loaded, options)
    expected = _dedupe_sorted(kept + configure(notes, options))

    stores = [DiagnosticStore(), DiagnosticStore()]
    stores[0].extend(first)
    stores[1].extend(second)
    assert list(stores[0]) == first and list(stores[1]) == second
    assert [stores[1].get(i) for i in range(len(second))] == second

    def suppress(ds: list[Diagnostic]) -> tuple[list[Diagnostic], list, list[Diagnostic]]:
        k, s, n = apply_comment_suppressions(ds, loaded, options)
        return k, s, configure(n, options)

    for predicate in (lambda path: may_have_comments(path, loaded, options), lambda _path: True):
        view, got_suppressed = finish(stores, suppress, predicate)
        assert list(view) == expected
        assert [view[i] for i in range(len(view))] == expected
        assert view[-1] == expected[-1] and view[2:5] == expected[2:5]
        assert got_suppressed == suppressed
        counts = {"error": 0, "warning": 0, "info": 0}
        for d in expected:
            counts[d.severity] += 1
        assert {k: v for k, v in counts.items() if v} == view.severity_counts()
    assert suppressed, "the comments suppress some findings"
    assert any(d.rule == "KV003" for d in expected), "the malformed comment is reported"
    assert len(expected) < len(kept), "some findings were repeated"


def test_equal_hashes_are_told_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every de-duplication hash made equal: findings are still compared by their whole key."""
    monkeypatch.setattr(diagstore, "CHUNK", 5)
    monkeypatch.setattr(diagstore, "PLAIN", 0)
    files, loaded = _setup(tmp_path)
    options = Options(allow_hub=False)
    diags = _diagnostics(random.Random(7), files, 90)
    expected = _dedupe_sorted(list(diags))
    store = DiagnosticStore()
    store.extend(diags)
    for i in range(len(store)):
        store.key_hash[i] = 42
    view, _ = finish([store], lambda ds: (ds, [], []), lambda _p: False)
    assert list(view) == expected
    assert len(expected) < len(diags)
    del options


def test_view_reads_through_mapped_functions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(diagstore, "CHUNK", 2)
    monkeypatch.setattr(diagstore, "PLAIN", 0)
    diags = [Diagnostic("KV104", "error", f"m{i}", Loc("f.yaml", 10 - i, 1)) for i in range(5)]
    store = DiagnosticStore()
    store.extend(diags)
    view, _ = finish([store], lambda ds: (ds, [], []), lambda _p: False)
    assert [d.message for d in view] == ["m4", "m3", "m2", "m1", "m0"]
    tagged = view.mapped(lambda d: Diagnostic(d.rule, d.severity, d.message + "!", d.loc))
    twice = tagged.mapped(lambda d: Diagnostic(d.rule, d.severity, d.message + "?", d.loc))
    assert [d.message for d in twice] == ["m4!?", "m3!?", "m2!?", "m1!?", "m0!?"]
    assert [d.message for d in view] == ["m4", "m3", "m2", "m1", "m0"]  # the view itself is unchanged
    assert isinstance(twice, DiagnosticView) and len(twice) == 5
    with pytest.raises(IndexError):
        view[5]


def test_streamed_check_with_tiny_chunks_reports_as_the_whole_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every finding encoded, in chunks of three: the reports equal the whole-input pipeline's, on the
    corpus (or the bundled examples) plus a file with suppression comments."""
    monkeypatch.setattr(diagstore, "CHUNK", 3)
    monkeypatch.setattr(diagstore, "PLAIN", 0)
    target = tmp_path / "in"
    target.mkdir()
    # a trailing comment with a reason suppresses KV103 on the args: line (the vLLM command's); one without a reason on
    # the qwen command line suppresses nothing and is reported (KV003)
    for name, needle, comment in (
        ("chat-8b-l4.yaml", "args:", "  # kvlint: ignore KV103=long prompts are refused upstream"),
        ("qwen-7b-tp2.yaml", 'command: ["vllm", "serve"', "  # kvlint: ignore KV404"),
        ("llama-8b-h100-ok.yaml", "", ""),
    ):
        lines = (ROOT / "fixtures" / "examples" / name).read_text().splitlines()
        lines = [line + comment if needle and needle in line else line for line in lines]
        (target / name).write_text("\n".join(lines) + "\n")
    paths = [str(target)] + ([str(CORPUS)] if CORPUS.is_dir() else [])
    options = Options(allow_hub=False)
    streamed = run_paths(paths, options, no_config=True, jobs=1).result
    assert isinstance(streamed.diagnostics, DiagnosticView)
    whole = run_check(paths, options)
    assert streamed.suppressed_diagnostics == whole.suppressed_diagnostics
    assert [s.diagnostic.rule for s in streamed.suppressed_diagnostics] == ["KV103"]
    assert any(d.rule == "KV003" for d in streamed.diagnostics)
    for name in ("text", "json", "sarif"):
        assert render(name, streamed) == render(name, whole), name


def test_result_counts_read_the_view_without_decoding(monkeypatch: pytest.MonkeyPatch) -> None:
    # CheckResult.counts() takes a streaming run's counts from the view's severity columns: the same numbers,
    # in the same key order, as counting the decoded diagnostics, and no diagnostic is decoded for them
    run = run_paths([str(ROOT / "fixtures" / "rules")], Options(allow_hub=False), jobs=1)
    result = run.result
    assert isinstance(result.diagnostics, DiagnosticView)
    expected = {"error": 0, "warning": 0, "info": 0}
    for d in list(result.diagnostics):
        expected[d.severity] = expected.get(d.severity, 0) + 1
    assert all(expected.values())

    def no_decoding(*_args: object) -> None:
        raise AssertionError("counts() decoded a diagnostic")

    monkeypatch.setattr(DiagnosticStore, "get", no_decoding)
    got = result.counts()
    assert got == expected and list(got) == list(expected)


def test_of_rules_gives_the_diagnostics_of_those_rules_decoding_only_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # DiagnosticView.of_rules (kvlint.sizing.unread's reading of a streaming run) gives what filtering the
    # whole view gives, in order, through a mapped function, and decodes only the diagnostics it gives
    monkeypatch.setattr(diagstore, "CHUNK", 4)
    monkeypatch.setattr(diagstore, "PLAIN", 0)
    # five fixture directories: ~350 diagnostics, every rule asked below among them (not every fixture
    # directory's: fixtures/collected's charts and trees made that run most of this test's time)
    paths = [str(ROOT / "fixtures" / d) for d in ("rules", "helm", "engines", "load", "config")]
    run = run_paths(paths, Options(allow_hub=False), no_config=True, jobs=1)
    view = run.result.diagnostics
    assert isinstance(view, DiagnosticView)
    everything = list(view)
    for rules in ({"KV001", "KV002", "KV503"}, {"KV103"}, {"KV999"}, set()):
        want = [d for d in everything if d.rule in rules]
        assert bool(want) == bool(rules - {"KV999"}), rules
        assert list(view.of_rules(rules)) == want
        assert list(view.mapped(lambda d: d).of_rules(rules)) == want
    # a rule of few of the fixtures' diagnostics (KV002 is no longer: the raw charts of collected/trees)
    some = {"KV001"}
    assert 0 < len([d for d in everything if d.rule in some]) < len(everything) // 10
    decoded: list[int] = []
    real_decode = diagstore._decode

    def counting(blob: bytes) -> list[Diagnostic]:
        decoded.append(1)
        return real_decode(blob)

    monkeypatch.setattr(diagstore, "_decode", counting)
    for store in view._stores:
        store._cache.clear()
    list(view.of_rules(some))
    n_some = len(decoded)
    decoded.clear()
    for store in view._stores:
        store._cache.clear()
    list(view)
    assert n_some < len(decoded) // 4


def test_a_view_whose_order_jumps_between_chunks_decodes_each_chunk_once_a_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # many workloads' findings located in one shared object (KAITO Workspaces sharing an inference ConfigMap,
    # services sharing a runtime) are appended workload by workload but reported line by line: the order visits
    # one diagnostic of each workload in turn. Read one by one, nearly every diagnostic decoded a chunk of 256
    # (100 Workspaces x 1,000 unknown options: 60 s); a window of reads decodes each chunk it needs once
    groups, per_group = 100, 205
    store = DiagnosticStore()
    for g in range(groups):
        for j in range(per_group):
            store.append(
                Diagnostic("KV205", "warning", f"option {j} of workload {g}", Loc("cm.yaml", j + 1, 1))
            )
    order = [j + g * per_group for j in range(per_group) for g in range(groups)]  # line by line
    view = DiagnosticView([store], order)
    decoded: list[int] = []
    real_decode = diagstore._decode

    def counting(blob: bytes) -> list[Diagnostic]:
        decoded.append(1)
        return real_decode(blob)

    monkeypatch.setattr(diagstore, "_decode", counting)
    store._cache.clear()
    got = [d.message for d in view]
    assert got == [f"option {j} of workload {g}" for j in range(per_group) for g in range(groups)]
    chunks = -(-len(store) // diagstore.CHUNK)
    windows = -(-len(order) // diagstore._WINDOW)
    assert len(decoded) <= windows * chunks, len(
        decoded
    )  # 13,120 before: about one per diagnostic read past the plain ones
    decoded.clear()
    store._cache.clear()
    assert [d.message for d in view.of_rules({"KV205"})] == got and len(decoded) <= windows * chunks
