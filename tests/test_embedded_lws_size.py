"""Operator objects that embed a LeaderWorkerSet's ``leaderWorkerTemplate`` and are read by the structural walk
(llm-d's DisaggregatedSet ``roles[].spec.leaderWorkerTemplate``, llmaz's Service ``spec.workloadTemplate``): the
group size gives the group's GPUs, as for a LeaderWorkerSet, and a size LWS refuses is a KV206 at the size, with
nothing sized on it, as :func:`kvlint.workloads.lws.lws_workloads` does (it was read as no size or as 10^12 pods,
and the engine's ``--pipeline-parallel-size $(LWS_GROUP_SIZE)`` took the blame). The DisaggregatedSet is the real
llm-d guide of fixtures/webhook (source in its SOURCE.md) with its decode role's size and pipeline size edited."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.types import Diagnostic
from kvlint.workloads.lws import MAX_INT32

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
DSET = (
    FIXTURES
    / "webhook"
    / "llm-d__llm-d__guides__pd-disaggregation__modelserver__gpu__vllm__base__disaggregatedset.yaml"
)
LLMAZ = FIXTURES / "collected" / "InftyAI__llmaz__docs__examples__multi-nodes__service.yaml"


def _decode(tmp_path: Path, size: str, pp: int | None = None) -> list[Diagnostic]:
    lines = DSET.read_text().split("\n")
    size_at = [i for i, ln in enumerate(lines) if ln.strip().startswith("size: 1")][1]  # the decode role's
    lines[size_at] = lines[size_at].replace("size: 1", f"size: {size}")
    text = "\n".join(lines)
    if pp is not None:
        tp = '- "--tensor-parallel-size=4"'
        indent = " " * (text.index(tp) - text.rindex("\n", 0, text.index(tp)) - 1)
        text = text.replace(tp, f'{tp}\n{indent}- "--pipeline-parallel-size={pp}"')
    f = tmp_path / "ds.yaml"
    f.write_text(text)
    return list(run_check([str(f)], Options(allow_hub=False)).diagnostics)


@pytest.mark.parametrize("size", ["0", "-1", "two", str(MAX_INT32 + 1), "1000000000000"])
def test_a_refused_embedded_group_size_is_kv206_and_nothing_is_sized_on_it(tmp_path: Path, size: str) -> None:
    found = _decode(tmp_path, size)
    kv206 = [d for d in found if d.rule == "KV206"]
    assert len(kv206) == 1, kv206
    assert "leaderWorkerTemplate.size" in kv206[0].message
    assert "the LeaderWorkerSet the DisaggregatedSet makes from this template" in kv206[0].message
    assert kv206[0].loc is not None and kv206[0].loc.line == 160
    # the decode role is not sized (the prefill role still is)
    assert not [d for d in found if d.loc is not None and 160 < d.loc.line < 260 and d.rule != "KV206"]


def test_the_product_of_replicas_and_size_is_bounded(tmp_path: Path) -> None:
    text = DSET.read_text()
    f = tmp_path / "ds.yaml"
    lines = text.split("\n")
    at = [i for i, ln in enumerate(lines) if "replicas: 1  # per slice" in ln][1]
    lines[at] = lines[at].replace("replicas: 1", f"replicas: {MAX_INT32 // 2}")
    size_at = [i for i, ln in enumerate(lines) if ln.strip().startswith("size: 1")][1]
    lines[size_at] = lines[size_at].replace("size: 1", "size: 4")
    f.write_text("\n".join(lines))
    kv206 = [d for d in run_check([str(f)], Options(allow_hub=False)).diagnostics if d.rule == "KV206"]
    assert len(kv206) == 1 and "exceeds 2,147,483,647" in kv206[0].message


@pytest.mark.parametrize(("size", "fits"), [(1, False), (2, True)])
def test_the_group_size_gives_the_groups_gpus(tmp_path: Path, size: int, fits: bool) -> None:
    """TP 4 x PP 2 needs 8 GPUs: one pod of 4 is short (KV403), a group of two such pods is not."""
    found = _decode(tmp_path, str(size), pp=2)
    assert any(d.rule == "KV403" for d in found) is not fits
    assert not any(d.rule == "KV206" for d in found)


def test_llmaz_service_workload_template_size_is_checked(tmp_path: Path) -> None:
    f = tmp_path / "svc.yaml"
    f.write_text(LLMAZ.read_text().replace("    size: 2\n", "    size: 0\n", 1))
    found = run_check([str(f)], Options(allow_hub=False)).diagnostics
    kv206 = [d for d in found if d.rule == "KV206"]
    assert len(kv206) == 1 and "the LeaderWorkerSet the Service makes" in kv206[0].message
    assert not [d for d in found if d.container]  # neither template is sized
