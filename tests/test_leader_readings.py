"""A leader's container is read once for its own analysis and for each worker that joins it
(:func:`kvlint.engines.multinode.read_container` within :func:`~kvlint.engines.multinode.leader_readings`),
when both readings are made with the same arguments; each user gets its own copy, which the pipeline's later
changes to the leader's reading do not reach; a copy takes from each budget (a mounted script read, a review's)
what the reading took, as reading again would. Fixture: the LeaderWorkerSet project's vLLM example
(fixtures/collected)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import kvlint.engines as engines
import kvlint.engines.command as command
import kvlint.engines.shell as shell
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
    assert worker.serving.joins is not None
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


def test_a_review_reads_the_leader_once_and_spends_its_budget_for_each_use(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Within a review (``max_review_size``) the copy takes from the review's command-line budget what the reading
    took, as reading again would (:func:`kvlint.engines.shell.charge_command_text`)."""
    loaded = load_text(VLLM_LWS.read_bytes(), str(VLLM_LWS))
    charged: list[int] = []
    real_charge = shell.charge_command_text

    def charge(chars: int) -> None:
        charged.append(chars)
        real_charge(chars)

    monkeypatch.setattr(command, "charge_command_text", charge)
    left: list[list[int]] = []
    real_lists = shell.review_budget_lists

    def lists() -> tuple[list[int], ...]:
        got = real_lists()
        left[:] = [got[1]]
        return got

    monkeypatch.setattr(shell, "review_budget_lists", lists)
    counts = _counting(monkeypatch)
    analyse_documents(loaded.documents, Options(allow_hub=False, max_review_size=1 << 20))
    assert counts["vllm-leader"] == 1
    leader_chars = charged[0]  # the leader is the object's first container read
    # every container's command line charged once, the leader's twice (its own analysis and the worker's join)
    assert left and shell.REVIEW_COMMAND_CHARS - left[0][0] == sum(charged) + leader_chars


def test_a_shared_reading_takes_the_budgets_again_or_is_made_again() -> None:
    """A copy is given only while what is left of each budget covers what the reading took (taken again);
    otherwise the container is read again. Other arguments, or outside the block: read again."""
    loaded = load_text(VLLM_LWS.read_bytes(), str(VLLM_LWS))
    workloads = find_workloads(loaded.documents)
    lead = next(w for w in workloads if w.leader is not None).leader
    assert lead is not None
    container = engine_containers(lead.pod_spec)[0]
    calls: list[str] = []

    def spending(c: Any, **kwargs: Any) -> Any:  # a reading that reads a mounted script of 10 characters
        budget = command._MOUNTED_LEFT.get()
        assert budget is not None
        if budget[0] >= 10:
            budget[0] -= 10
            calls.append("read")
        else:
            calls.append("not read")
        return None

    shared = multinode.leader_readings(workloads)
    assert shared is not None
    with command.mounted_script_budget(25), shared:
        budget = command._MOUNTED_LEFT.get()
        assert budget is not None
        for _ in range(4):
            multinode.read_container(spending, container, pod_spec=lead.pod_spec)
        # read (25 -> 15), a copy taking 10 again (5), read again: refused (5 left), a copy of that
        assert calls == ["read", "not read"] and budget[0] == 5
        # other arguments: another reading
        multinode.read_container(spending, container, pod_spec=lead.pod_spec, kuberay=True)
        assert len(calls) == 3
    with command.mounted_script_budget(25):  # outside the sharing block: read each time
        multinode.read_container(spending, container, pod_spec=lead.pod_spec)
        multinode.read_container(spending, container, pod_spec=lead.pod_spec)
    assert len(calls) == 5
