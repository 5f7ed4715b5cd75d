"""A leader's container is read once in ``kvlint check`` for its own analysis and for each worker that joins it
(:func:`kvlint.engines.multinode.read_container` within :func:`~kvlint.engines.multinode.shared_leader_readings`),
when both readings are made with the same arguments; each user gets its own copy, which the pipeline's later
changes to the leader's reading do not reach. A review's readings are not shared (each counts against its budgets),
nor a reading that spent the mounted-script budget. Fixture: the LeaderWorkerSet project's vLLM example
(fixtures/collected)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import kvlint.engines as engines
import kvlint.engines.command as command
from kvlint.engines import multinode
from kvlint.load import load_text
from kvlint.pipeline import Options, analyse_documents, run_check
from kvlint.workloads import find_workloads
from kvlint.workloads.base import engine_containers

REPO = Path(__file__).resolve().parents[1]
VLLM_LWS = REPO / "fixtures/collected/kubernetes-sigs__lws__docs__examples__leaderworkerset__basic__vllm.yaml"


def _counting(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Count the parser's readings by container name (the pipeline's and the leader lookup's)."""
    counts: Counter[str] = Counter()
    real = command.parse_container

    def parse(container: Any, **kwargs: Any) -> Any:
        counts[str(container.get("name"))] += 1
        return real(container, **kwargs)

    monkeypatch.setattr(engines, "parse_container", parse)
    monkeypatch.setattr(command, "parse_container", parse)
    return counts


def test_the_leader_is_read_once_for_itself_and_its_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    counts = _counting(monkeypatch)
    res = run_check([str(VLLM_LWS)], Options(allow_hub=False))
    assert counts["vllm-leader"] == 1  # its own analysis; the worker's join took a copy (2 readings before)
    assert counts["vllm-worker"] == 1
    leader = next(cr for cr in res.containers if cr.container_name == "vllm-leader")
    worker = next(cr for cr in res.containers if cr.container_name == "vllm-worker")
    joined = worker.serving.joins.leader
    assert joined is not None and joined is not leader.serving
    # the worker's copy is the reading itself, not the leader's as the pipeline changed it afterwards
    monkeypatch.undo()
    doc = leader.workload
    fresh = command.parse_container(
        leader.serving.container, pod_spec=doc.pod_spec, namespace=doc.namespace, configmaps={}
    )
    assert joined == fresh
    for name in ("flags", "env", "findings", "unresolved", "env_locs"):
        assert getattr(joined, name) is not getattr(leader.serving, name), name


def test_a_review_reads_the_leader_for_each_use(monkeypatch: pytest.MonkeyPatch) -> None:
    """Within a review (``max_review_size``) each reading counts against the review's command-line budget."""
    loaded = load_text(VLLM_LWS.read_bytes(), str(VLLM_LWS))
    counts = _counting(monkeypatch)
    analyse_documents(loaded.documents, Options(allow_hub=False, max_review_size=1 << 20))
    assert counts["vllm-leader"] >= 2


def test_a_reading_that_spent_a_budget_is_not_kept() -> None:
    loaded = load_text(VLLM_LWS.read_bytes(), str(VLLM_LWS))
    workloads = find_workloads(loaded.documents)
    lead = next(w for w in workloads if w.leader is not None).leader
    assert lead is not None
    container = engine_containers(lead.pod_spec)[0]
    calls: list[int] = []

    def spending(c: Any, **kwargs: Any) -> Any:  # a reading that reads a mounted script
        calls.append(1)
        command._PROCESS_MOUNTED_LEFT[0] -= 1
        return None

    def reading(c: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return None

    left = command._PROCESS_MOUNTED_LEFT[0]
    try:
        with multinode.shared_leader_readings(workloads):
            for parse in (spending, spending, reading, reading, reading):
                multinode.read_container(parse, container, pod_spec=lead.pod_spec)
            # other arguments: another reading
            multinode.read_container(reading, container, pod_spec=lead.pod_spec, kuberay=True)
        # outside the block nothing is shared
        multinode.read_container(reading, container, pod_spec=lead.pod_spec)
    finally:
        command._PROCESS_MOUNTED_LEFT[0] = left
    assert len(calls) == 2 + 1 + 1 + 1
