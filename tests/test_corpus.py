"""kvlint on the shared corpus of 114 real public manifests: no crash, and every vLLM workload gets a
memory plan or a KV5xx diagnostic saying why not (or a start-up error that makes a plan moot).

Skipped when ../shared/corpus/manifests is not beside the checkout.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kvlint.pipeline import Options, run_check

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "manifests"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus/manifests not present")

# Errors that stop vLLM before it sizes anything: a plan would describe an engine that never starts.
BLOCKING = {"KV401", "KV402", "KV304"}


@pytest.fixture(scope="module")
def corpus_result():
    return run_check([str(CORPUS)], Options(allow_hub=False))


def test_whole_corpus_is_read(corpus_result) -> None:
    files = [p for p in CORPUS.iterdir() if p.suffix in (".yaml", ".yml", ".json")]
    assert corpus_result.files == len(files) >= 100
    assert corpus_result.workloads >= 80


def test_every_vllm_workload_gets_a_plan_or_a_reason(corpus_result) -> None:
    by_container: dict[tuple, set[str]] = {}
    for d in corpus_result.diagnostics:
        by_container.setdefault((d.object, d.container), set()).add(d.rule)
    unexplained = []
    for cr in corpus_result.containers:
        if cr.serving.engine != "vllm":
            continue
        rules = by_container.get((cr.object_ref, cr.container_name), set())
        rules |= by_container.get(
            (cr.object_ref, ""), set()
        )  # findings on the object (a runtime template...)
        if cr.serving.joins is not None and cr.serving.joins.leader is not None:
            continue  # a multi-node worker joining its leader's engine: checked against the leader (KV403)
        if cr.plan is None and not (rules & {"KV501", "KV502", "KV503"}) and not (rules & BLOCKING):
            unexplained.append((cr.workload.doc.path, cr.object_ref, cr.container_name))
    assert not unexplained


def test_some_corpus_workloads_are_planned(corpus_result) -> None:
    planned = [cr for cr in corpus_result.containers if cr.plan is not None]
    assert len(planned) >= 5
    for cr in planned:
        p = cr.plan
        assert p.kv_bytes_per_token > 0 and p.block_size > 0
        assert p.budget_bytes <= p.total_bytes


def test_readme_quotes_the_corpus_sizing_line_and_coverage(corpus_result) -> None:
    """README.md quotes the sizing line `kvlint check` prints on this corpus ("Never a silent pass") and the
    coverage `bench/sizing_coverage.py` derives from it: plan or fleet verdict for N of M (P %; S with leaders)."""
    from kvlint.sizing import summarise

    readme = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8").split())
    s = summarise(corpus_result)
    quoted = re.search(r"\(`(sized \d+ of \d+ serving containers [^`]*?)\.\.\.` on the shared corpus", readme)
    assert quoted is not None and s.line().startswith(quoted.group(1))
    # every file but the index: the corpus holds a .tpl (a Helm template, reported as such) beside its YAML
    files = [p for p in CORPUS.iterdir() if p.name != "INDEX.csv"]
    share = f"{100 * (s.plan + s.fleet) / s.serving:.1f}"
    assert (
        f"on the shared corpus of {len(files)} public manifests, a memory plan or fleet verdict for "
        f"{s.plan + s.fleet} of {s.serving} serving containers ({share} %; {s.sized} counting" in readme
    )
