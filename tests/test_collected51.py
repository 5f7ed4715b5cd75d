"""Findings on the manifests added to fixtures/collected in the fresh51 pass (sources in its INDEX.csv).

KV403's remedy for an SGLang engine whose tensor parallelism spans more GPUs than one node: zhaotyer/lws_usage
``k8s_sglang.yaml`` is a StatefulSet of 2 pods of 8 GPUs whose command gives ``--dist-init-addr`` and
``--tensor-parallel-size 16`` but no ``--nnodes``, so each pod starts all 16 ranks on its 8 GPUs (KV403, true).
The remedy told it to keep tensor parallelism within a node and span nodes with pipeline parallelism, where SGLang
spans tensor parallelism over ``--nnodes`` itself (sglang@0.5.23:python/sglang/srt/entrypoints/engine.py::
_calculate_rank_ranges): the missing ``--nnodes 2`` and ``--node-rank`` are the fix."""

from __future__ import annotations

from pathlib import Path

from kvlint.options import Options
from kvlint.pipeline import run_check

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures/collected"
STS = COLLECTED / "zhaotyer__lws_usage__k8s_sglang.yaml"
RAY_VLLM = COLLECTED / "zhaotyer__lws_usage__k8s_vllm.yaml"


def _kv403(path: Path) -> list:
    res = run_check([str(path)], Options(allow_hub=False))
    return [d for d in res.diagnostics if d.rule == "KV403"]


def test_sglang_tensor_parallelism_beyond_a_node_is_told_the_missing_nnodes() -> None:
    text = STS.read_text()
    assert "--dist-init-addr sglang-master-pod:5100" in text and "--tensor-parallel-size 16" in text
    assert "--nnodes" not in text and "nvidia.com/gpu: 8" in text
    (d,) = _kv403(STS)
    assert d.severity == "error" and "needs 16 GPUs but the pod requests 8" in d.message
    assert "names --dist-init-addr but no --nnodes" in d.fix
    assert "--nnodes 2" in d.fix and "--node-rank 0 to 1" in d.fix
    assert "pipeline parallelism" not in d.fix


def test_the_multinode_form_whole_without_dist_init_addr_and_the_old_remedy_where_it_does_not_divide(
    tmp_path: Path,
) -> None:
    text = STS.read_text()
    bare = tmp_path / "bare.yaml"
    bare.write_text(text.replace("--dist-init-addr sglang-master-pod:5100 \\\n", ""))
    assert "--dist-init-addr" not in bare.read_text()
    (d,) = _kv403(bare)
    assert "--nnodes 2" in d.fix and "--dist-init-addr ADDRESS:PORT of rank 0" in d.fix
    assert "LeaderWorkerSet of size 2" in d.fix and "names --dist-init-addr" not in d.fix
    # 12 ranks do not make pods of 8 GPUs: SGLang's even split does not apply, the general remedy stays
    odd = tmp_path / "odd.yaml"
    odd.write_text(text.replace("--tensor-parallel-size 16", "--tensor-parallel-size 12"))
    (d,) = _kv403(odd)
    assert "needs 12 GPUs" in d.message and "--nnodes" not in d.fix and "pipeline parallelism" in d.fix


def test_vllm_beyond_a_node_keeps_the_pipeline_remedy() -> None:
    found = _kv403(RAY_VLLM)
    assert found and all("--nnodes" not in d.fix and "pipeline parallelism" in d.fix for d in found)
