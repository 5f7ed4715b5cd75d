"""A multi-node engine hand-rolled as one object per node: a one-replica Deployment running ``--nnodes 2 --node-rank
0`` and a one-replica StatefulSet running ``--node-rank 1``, the same ``--dist-init-addr`` (SGLang) or
``--master-addr`` (vLLM 0.11.1+, multiprocessing executor, the follower ``--headless``) naming a Service of the first.

kvlint paired nothing across objects: the rank-0 node got KV403's lone-node warning although its peer was in the same
run, and the follower was sized as an engine of its own. vLLM's rank-0 node alone was not checked at all (sglang@0.5.5
``ModelRunner.init_torch_distributed``, vllm@0.19.0 ``vllm/distributed/parallel_state.py::
init_distributed_environment``: both meet at the address with the world size of all nodes).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kvlint.pipeline import Options, run_check
from kvlint.types import ContainerResult

_NODE = """apiVersion: apps/v1
kind: {kind}
metadata: {{name: {name}}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      nodeSelector: {{nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}
      containers:
      - name: engine
        image: {image}
        command: {command}
        args: {args}
        resources: {{limits: {{nvidia.com/gpu: 4}}}}
        volumeMounts: [{{name: shm, mountPath: /dev/shm}}]
      volumes: [{{name: shm, emptyDir: {{medium: Memory}}}}]
"""
_SERVICE = """apiVersion: v1
kind: Service
metadata: {name: leader}
spec:
  selector: {app: leader}
  ports: [{port: 5000}]
"""
MODEL = "meta-llama/Llama-3.3-70B-Instruct"


def _node(
    engine: str, name: str, kind: str, rank: int | None, addr: str | None, extra: tuple[str, ...] = ()
) -> str:
    if engine == "sglang":
        image, command = "lmsysorg/sglang:v0.5.5", '["python3", "-m", "sglang.launch_server"]'
        words = ["--model-path", MODEL, "--tp", "8", "--context-length", "8192", "--nnodes", "2"]
        flag = "--dist-init-addr"
    else:
        image, command = "vllm/vllm-openai:v0.19.0", '["vllm", "serve"]'
        words = [MODEL, "--tensor-parallel-size", "8", "--max-model-len", "8192", "--nnodes", "2"]
        flag = "--master-addr"
    if rank is not None:
        words += ["--node-rank", str(rank)]
    if addr is not None:
        words += [flag, addr]
    words += list(extra)
    args = "[" + ", ".join(f'"{w}"' for w in words) + "]"
    return _NODE.format(kind=kind, name=name, image=image, command=command, args=args)


def _run(tmp_path: Path, *docs: str):
    f = tmp_path / "m.yaml"
    f.write_text("---\n".join(docs))
    res = run_check([str(f)], Options(allow_hub=False))
    by_name = {c.workload.name: c for c in res.containers if isinstance(c, ContainerResult)}
    return [d for d in res.diagnostics if d.rule == "KV403"], by_name


def _follower(engine: str, addr: str = "leader:5000") -> str:
    extra = ("--headless",) if engine == "vllm" else ()
    return _node(engine, "worker", "StatefulSet", 1, addr, extra)


@pytest.mark.parametrize("engine", ["sglang", "vllm"])
def test_leader_and_worker_objects_are_one_engine(tmp_path: Path, engine: str) -> None:
    kv403, by_name = _run(
        tmp_path, _node(engine, "leader", "Deployment", 0, "leader:5000"), _SERVICE, _follower(engine)
    )
    assert kv403 == [], [d.message for d in kv403]
    leader, worker = by_name["leader"], by_name["worker"]
    assert leader.plan is not None and leader.workload.role == "leader"
    # the follower joins the leader's engine: sized once, at the leader (8 GPUs over the two pods)
    assert worker.serving.joins is not None and worker.serving.joins.follower
    assert worker.plan is None and worker.workload.leader is not None
    assert worker.workload.leader.name == "leader"


@pytest.mark.parametrize("engine", ["sglang", "vllm"])
@pytest.mark.parametrize(
    "peer",
    [
        None,  # rank 1 missing from the run
        "other:5000",  # another meeting address: not the same engine
    ],
)
def test_a_missing_or_foreign_rank_keeps_the_lone_node_warning(
    tmp_path: Path, engine: str, peer: str | None
) -> None:
    docs = [_node(engine, "leader", "Deployment", 0, "leader:5000"), _SERVICE]
    if peer is not None:
        docs.append(_follower(engine, peer))
    kv403, by_name = _run(tmp_path, *docs)
    lone = [d for d in kv403 if "runs node rank 0" in d.message]
    assert len(lone) == 1 and lone[0].severity == "warning", [d.message for d in kv403]
    assert by_name["leader"].workload.role is None


@pytest.mark.parametrize("engine", ["sglang", "vllm"])
def test_two_rank_zero_nodes_are_not_paired(tmp_path: Path, engine: str) -> None:
    kv403, by_name = _run(
        tmp_path,
        _node(engine, "leader", "Deployment", 0, "leader:5000"),
        _node(engine, "worker", "StatefulSet", 0, "leader:5000"),
    )
    assert by_name["leader"].workload.role is None and by_name["worker"].workload.role is None
    assert len([d for d in kv403 if "runs node rank 0" in d.message]) == 2


def test_vllm_rank_zero_alone_without_master_addr_is_an_error(tmp_path: Path) -> None:
    """vLLM's default ``master_addr`` is 127.0.0.1 (``ParallelConfig``): no other pod could ever join."""
    (found,) = _run(tmp_path, _node("vllm", "leader", "Deployment", None, None))[0]
    assert found.severity == "error" and "127.0.0.1" in found.message


def test_vllm_headless_or_ray_node_is_not_a_lone_leader(tmp_path: Path) -> None:
    for extra in (("--headless",), ("--distributed-executor-backend", "ray")):
        kv403, _ = _run(tmp_path, _node("vllm", "leader", "Deployment", 0, "leader", extra))
        assert not [d for d in kv403 if "runs node rank 0" in d.message], extra


def test_nodes_in_two_files_are_not_paired(tmp_path: Path) -> None:
    """Pairing stays within one input (file, chart, kustomization): ``kvlint check`` streams each input on its own,
    and a whole run must agree with it."""
    (tmp_path / "a.yaml").write_text(_node("sglang", "leader", "Deployment", 0, "leader:5000"))
    (tmp_path / "b.yaml").write_text(_follower("sglang"))
    res = run_check([str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml")], Options(allow_hub=False))
    assert [d for d in res.diagnostics if d.rule == "KV403" and "runs node rank 0" in d.message]


@pytest.mark.skipif(shutil.which("helm") is None, reason="helm is not installed")
def test_a_chart_whose_leader_and_worker_are_two_templates_is_paired(tmp_path: Path) -> None:
    # a rendered chart's documents carry their template's path: the nodes of one chart are one input
    chart = tmp_path / "mn"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: mn\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("{}\n")
    (chart / "templates" / "leader.yaml").write_text(
        _node("sglang", "leader", "Deployment", 0, "leader:5000")
    )
    (chart / "templates" / "worker.yaml").write_text(_follower("sglang"))
    res = run_check([str(chart)], Options(allow_hub=False))
    by_name = {c.workload.name: c for c in res.containers if isinstance(c, ContainerResult)}
    assert not [d for d in res.diagnostics if d.rule == "KV403"]
    assert by_name["worker"].serving.joins is not None


def test_a_kustomization_of_the_two_nodes_is_paired(tmp_path: Path) -> None:
    (tmp_path / "leader.yaml").write_text(_node("vllm", "leader", "Deployment", 0, "leader"))
    (tmp_path / "worker.yaml").write_text(_follower("vllm", "leader"))
    (tmp_path / "kustomization.yaml").write_text("resources: [leader.yaml, worker.yaml]\n")
    res = run_check([str(tmp_path)], Options(allow_hub=False))
    by_name = {c.workload.name: c for c in res.containers if isinstance(c, ContainerResult)}
    assert not [d for d in res.diagnostics if d.rule == "KV403"]
    assert by_name["worker"].serving.joins is not None


def test_two_plain_files_stay_two_inputs(tmp_path: Path) -> None:
    # without a kustomization (or chart) around them, two files are two inputs: the rank-0 node keeps its warning
    (tmp_path / "leader.yaml").write_text(_node("vllm", "leader", "Deployment", 0, "leader"))
    (tmp_path / "worker.yaml").write_text(_follower("vllm", "leader"))
    res = run_check([str(tmp_path)], Options(allow_hub=False))
    assert [d.severity for d in res.diagnostics if d.rule == "KV403"] == ["warning"]


def _without_shm(doc: str) -> str:
    return doc.replace("        volumeMounts: [{name: shm, mountPath: /dev/shm}]\n", "").replace(
        "      volumes: [{name: shm, emptyDir: {medium: Memory}}]\n", ""
    )


def test_paired_follower_finding_is_at_its_own_command(tmp_path: Path) -> None:
    # rr49: pair_node_objects joins the rank-1 object to the rank-0 one; the follower's KV404 (no /dev/shm volume)
    # was placed at the leader's --tp (ctx.layout is the leader's), in the leader's document
    f = tmp_path / "m.yaml"
    f.write_text(
        "---\n".join(
            _without_shm(_node("sglang", name, "Deployment", rank, "leader:5000"))
            for name, rank in (("leader", 0), ("worker", 1))
        )
    )
    res = run_check([str(f)], Options(allow_hub=False))
    lines = {d.object: d.loc.line for d in res.diagnostics if d.rule == "KV404" and d.loc is not None}
    second_doc = f.read_text().splitlines().index("---") + 1  # the worker's document starts after this line
    assert "Deployment/worker" in lines and "Deployment/leader" in lines, lines
    assert lines["Deployment/worker"] > second_doc, lines
    assert lines["Deployment/leader"] < second_doc, lines


def test_a_chart_followers_shm_finding_is_in_its_own_template(tmp_path: Path) -> None:
    chart = tmp_path / "mn"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: mn\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("{}\n")
    (chart / "templates" / "leader.yaml").write_text(
        _without_shm(_node("sglang", "leader", "Deployment", 0, "leader:5000"))
    )
    (chart / "templates" / "worker.yaml").write_text(_without_shm(_follower("sglang")))
    res = run_check([str(chart)], Options(allow_hub=False))
    kv404 = {d.object: d for d in res.diagnostics if d.rule == "KV404"}
    assert set(kv404) == {"Deployment/leader", "StatefulSet/worker"}, kv404
    for obj, name in (("Deployment/leader", "leader.yaml"), ("StatefulSet/worker", "worker.yaml")):
        loc = kv404[obj].loc
        assert loc is not None and loc.file.endswith(name), (obj, loc)


@pytest.mark.parametrize("engine", ["sglang", "vllm"])
def test_a_nodes_shm_finding_counts_the_workers_of_its_pod(tmp_path: Path, engine: str) -> None:
    # TP 8 over two nodes: each pod runs 4 GPU workers, and /dev/shm is the pod's own
    docs = [
        _without_shm(_node(engine, "leader", "Deployment", 0, "leader:5000")),
        _without_shm(_follower(engine)),
    ]
    f = tmp_path / "m.yaml"
    f.write_text("---\n".join(docs))
    res = run_check([str(f)], Options(allow_hub=False))
    msgs = [d.message for d in res.diagnostics if d.rule == "KV404"]
    assert len(msgs) == 2, msgs
    for m in msgs:
        assert m.startswith("4 GPU workers of this pod ("), m
        assert "8 over 2 nodes" in m, m
