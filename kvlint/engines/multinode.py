"""Multi-node workers that join their leader's engine.

In a LeaderWorkerSet, a KServe multi-node runtime or a Ray cluster, the worker pods of a vLLM engine that
spans nodes run no engine of their own: they start a Ray worker that joins the leader's Ray cluster
(``ray start --address=LEADER:6379 --block``, vLLM's ``examples/online_serving/multi-node-serving.sh worker``,
KubeRay's generated ``$KUBERAY_GEN_RAY_START_CMD``), and the leader's ``vllm serve`` places its tensor- and
pipeline-parallel workers on their GPUs. Such a container has nothing to read beyond its GPUs; kvlint finds
the leader's engine command in the same object (:attr:`kvlint.types.Workload.leader`) so that the worker's
GPUs can be checked against the leader's layout (KV403) and nothing else is asked of it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence

from kvlint.fastinit import replaced
from kvlint.source import LDict
from kvlint.types import Finding, JoinedEngine, ServingConfig, Workload

__all__ = [
    "find_leader",
    "follower_how",
    "join_follower",
    "node_address",
    "pair_node_objects",
    "vllm_nodes_per_dp_group",
]


def _leader_config(
    w: Workload,
    configmaps: Mapping[tuple[str | None, str], LDict] | None,
    engine_version_option: str | None,
    seen: list[object] | None = None,
    served: list[object] | None = None,
) -> ServingConfig | None:
    """The engine command of ``w``'s leader workload (the first of its containers whose engine command kvlint
    reads and that joins no other: its ``containers``, then its sidecar init containers on an accelerator, the
    containers the leader's own analysis reads, :func:`kvlint.workloads.base.engine_containers`), read as the leader's own
    analysis reads it; None when there is none. ``seen`` and ``served``, when given, receive the containers looked
    at and those among them kvlint reads as a serving engine (its command read or not)."""
    from kvlint.engines.command import parse_container
    from kvlint.engines.shell import ReviewTooLarge
    from kvlint.workloads.base import engine_containers

    lw = w.leader
    assert lw is not None
    for c in engine_containers(lw.pod_spec):
        if seen is not None:
            seen.append(c)
        try:
            cfg = parse_container(
                c,
                pod_spec=lw.pod_spec,
                namespace=lw.namespace,
                configmaps=configmaps,
                engine_version_option=engine_version_option,
            )
        except ReviewTooLarge:  # each reading of the leader counts against the review's command-line budget
            raise
        except Exception:  # a leader the parser cannot read leaves the worker unjoined
            continue
        if cfg is not None and served is not None:
            served.append(c)
        if cfg is not None and cfg.joins is None and (cfg.model is not None or cfg.flags):
            return cfg
    return None


def find_leader(
    serving: ServingConfig,
    w: Workload,
    configmaps: Mapping[tuple[str | None, str], LDict] | None = None,
    engine_version_option: str | None = None,
) -> None:
    """Fill ``serving.joins.leader`` with the engine command of ``w``'s leader workload (the first of its
    containers whose engine command kvlint reads), read with the release ``engine_version_option``
    (``--engine-version``) and its image decide, as the leader's own analysis reads it. Leaves it None when the
    workload has no leader or the leader's command cannot be read either. Never raises."""
    joins = serving.joins
    if joins is None:
        return
    if w.leader is None:
        _note(serving, "no leader or head pod template of that engine is in the same object")
        return
    seen: list[object] = []
    served: list[object] = []
    cfg = _leader_config(w, configmaps, engine_version_option, seen, served)
    if cfg is not None:
        joins.leader = cfg
        joins.leader_container = cfg.container_name
        return
    if served:
        _note(
            serving,
            f"the engine command of its leader ({w.leader.path}) cannot be read either (see its findings)",
        )
        return
    # the leader runs nothing kvlint takes for a serving engine (a program it does not know on an image that names
    # no engine): it has no findings to see, and linting the two together, as they are, reads no more
    runs = ""
    first = seen[0] if seen else None
    if isinstance(first, Mapping):
        words = [
            str(x) for key in ("command", "args") if isinstance(first.get(key), list) for x in first[key]
        ]
        text = " ".join(" ".join(words).split())
        if text:
            runs = f" (its container '{first.get('name', '')}' runs `{text[:200]}{' ...' if len(text) > 200 else ''}`)"
    _note(
        serving,
        f"its leader ({w.leader.path}) runs no vLLM, SGLang or TGI command kvlint recognises{runs} and has no "
        "findings of its own",
        fix="check the engine the leader starts with `kvlint plan -- vllm serve MODEL --tensor-parallel-size N "
        "--pipeline-parallel-size M ...` (its parallel sizes spanning the group's GPUs)",
    )


#: Settings that only say where a node of a multi-node engine runs and how it reaches the others, which differ
#: from node to node by design (the node rank, vLLM's ``--headless``, the addresses and ports, the data-parallel
#: ranks a node starts and how many): every other setting of a follower must equal its leader's for the group to
#: be sized once, at the leader (:func:`join_follower`).
_PER_NODE = frozenset(
    {
        "node_rank",
        "headless",
        "host",
        "port",
        "master_addr",
        "master_port",
        "dist_init_addr",
        "data_parallel_start_rank",
        "data_parallel_rank",
        "data_parallel_address",
        "data_parallel_rpc_port",
        "data_parallel_size_local",
        "api_server_count",
    }
)


def vllm_nodes_per_dp_group(nnodes: int, dp: int, dp_local: int) -> int:
    """The nodes one vLLM data-parallel group spans, ``nnodes_within_dp = nnodes // (data_parallel_size //
    data_parallel_size_local)`` (vllm@00a5fdd ``vllm/config/parallel.py::ParallelConfig``; ``node_rank %`` it is
    a node's rank within its group, ``vllm/entrypoints/cli/serve.py::run_headless``). 0 when ``dp_local`` is not a
    positive divisor of ``dp`` (no layout vLLM builds) or the quotient is 0."""
    if dp_local < 1 or dp % dp_local:
        return 0
    groups = dp // dp_local
    return nnodes // groups if groups else 0


def _int_of(serving: ServingConfig, name: str) -> int | None:
    v = serving.get(name)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def follower_how(serving: ServingConfig) -> str | None:
    """How ``serving`` runs as a follower node of a multi-node engine whose first node is another pod, or None:

    * vLLM ``--headless`` on a node whose rank within its data-parallel group is past 0: it starts only the
      GPU workers of the leader's engine (vllm@00a5fdd ``vllm/entrypoints/cli/serve.py::run_headless``, the
      ``node_rank_within_dp > 0`` branch running a ``MultiprocExecutor``; ``node_rank_within_dp = node_rank %
      nnodes_within_dp``, ``nnodes_within_dp = nnodes // (data_parallel_size // data_parallel_size_local)``,
      ``vllm/config/parallel.py::ParallelConfig``), whose KV cache the leader's engine core sizes for all of them;
    * vLLM ``--headless`` with a data-parallel start rank past 0: the node's own data-parallel engine cores,
      replicas of the leader's engine serving behind the leader's API server (``run_headless``'s
      ``CoreEngineProcManager``);
    * SGLang ``--node-rank`` 1 or more with ``--nnodes`` above 1: every node runs the same command, node 0 the
      HTTP server and tokenizer, the others their tensor-parallel schedulers only (sglang
      ``python/sglang/srt/entrypoints/engine.py::_launch_subprocesses``, "non-zero rank nodes do not need to run
      tokenizer or detokenizer"); the KV pool is the smallest over all ranks (``get_available_gpu_memory`` with
      ``distributed=True`` in ``ModelRunner``).
    """
    rank = _int_of(serving, "node_rank")
    nnodes = _int_of(serving, "nnodes")
    if rank is not None and nnodes is not None and rank >= nnodes:
        return None  # a rank the engine refuses: not a node of the group
    if serving.engine == "vllm":
        if serving.get("headless") is not True:
            return None
        start = _int_of(serving, "data_parallel_start_rank")
        if rank is not None and rank > 0 and nnodes is not None and nnodes > 1:
            dp = _int_of(serving, "data_parallel_size") or 1
            dp_local = _int_of(serving, "data_parallel_size_local") or dp
            within = vllm_nodes_per_dp_group(nnodes, dp, dp_local)
            if within > 1 and rank % within > 0:
                return f"vllm serve --headless --node-rank {rank} of --nnodes {nnodes}"
        if start is not None and start > 0:
            return f"vllm serve --headless --data-parallel-start-rank {start}"
        return None
    if serving.engine == "sglang" and rank is not None and rank > 0 and nnodes is not None and nnodes > 1:
        return f"sglang --node-rank {rank} of --nnodes {nnodes}"
    return None


def join_follower(
    serving: ServingConfig,
    w: Workload,
    configmaps: Mapping[tuple[str | None, str], LDict] | None = None,
    engine_version_option: str | None = None,
) -> bool:
    """Mark ``serving`` as a follower of its leader's engine (``serving.joins`` with ``follower`` set) when it
    runs as one (:func:`follower_how`), the workload is a worker template whose object holds its leader
    (a LeaderWorkerSet's ``leaderTemplate``, ...), and the leader runs the same engine at the same release with
    the same model and settings, apart from those that differ per node (:data:`_PER_NODE`): the group is then
    one engine, sized once at the leader, and the worker is checked for what is its own (its pod, its image, its
    GPUs against its share of the group). A worker whose settings differ from its leader's is left to be sized
    on its own, as before. Returns whether it was marked; never raises on user input."""
    if serving.joins is not None or w.role != "worker" or w.leader is None:
        return False
    how = follower_how(serving)
    if how is None:
        return False
    leader = _leader_config(w, configmaps, engine_version_option)
    if leader is None or leader.engine != serving.engine or leader.version != serving.version:
        return False
    if (leader.model is None) != (serving.model is None) or (
        leader.model is not None and serving.model is not None and leader.model.value != serving.model.value
    ):
        return False
    mine = {k: v.value for k, v in serving.flags.items() if k not in _PER_NODE}
    theirs = {k: v.value for k, v in leader.flags.items() if k not in _PER_NODE}
    if mine != theirs or set(serving.unresolved) - _PER_NODE or set(leader.unresolved) - _PER_NODE:
        return False
    serving.joins = JoinedEngine(
        how, serving.command_loc, leader=leader, leader_container=leader.container_name, follower=True
    )
    return True


def _note(serving: ServingConfig, why: str, fix: str | None = None) -> None:
    joins = serving.joins
    assert joins is not None
    serving.findings.append(
        Finding(
            "KV503",
            f"this multi-node worker runs no engine of its own (`{joins.how}` joins the leader's): {why}, so its "
            "GPUs are not checked against the engine's layout",
            joins.loc,
            fix=fix
            or "lint the leader together with its workers (they are checked against its tensor- and "
            "pipeline-parallel sizes)",
            severity="info",
        )
    )


#: Workload kinds whose one replica is one pod, with no operator to start a peer node beside it
ONE_POD_KINDS = frozenset({"Pod", "Deployment", "StatefulSet", "ReplicaSet"})


def node_address(serving: ServingConfig) -> str | None:
    """Where the nodes of a multi-node engine meet, as the command gives it: SGLang's ``--dist-init-addr`` (each
    node's schedulers join ``tcp://ADDR`` with the world size of all ``--nnodes``; without it ``127.0.0.1`` of the
    node's own pod, sglang@0.5.5 ``srt/model_executor/model_runner.py::ModelRunner.init_torch_distributed``),
    vLLM's ``--master-addr`` and ``--master-port`` (``tcp://master_addr:master_port`` when ``nnodes > 1``,
    vllm@0.19.0 ``vllm/distributed/parallel_state.py``; default ``127.0.0.1:29501``, ``vllm/config/parallel.py::
    ParallelConfig``, options from 0.11.1). None when not given or not resolved (a variable)."""
    if serving.engine == "sglang":
        names: tuple[str, ...] = ("dist_init_addr",)
    elif serving.engine == "vllm":
        names = ("master_addr", "master_port")
    else:
        return None
    if any(n in serving.unresolved for n in names):
        return None
    addr = serving.get(names[0])
    if not isinstance(addr, str) or not addr.strip():
        return None
    port = serving.get(names[1]) if len(names) > 1 else None
    return addr.strip() + (f":{port}" if port is not None else "")


def _node_of(w: Workload, configmaps: Mapping[tuple[str | None, str], LDict] | None, version: str | None):
    """``(rank, serving)`` of the one engine container of ``w`` that runs as a node of a multi-node engine
    (``--nnodes`` above 1, the rank read or 0 when not given, an address :func:`node_address` reads), or None."""
    from kvlint.engines.command import parse_container
    from kvlint.engines.shell import ReviewTooLarge
    from kvlint.workloads.base import engine_containers

    found = []
    for c in engine_containers(w.pod_spec):
        try:
            cfg = parse_container(
                c,
                pod_spec=w.pod_spec,
                namespace=w.namespace,
                configmaps=configmaps,
                engine_version_option=version,
            )
        except ReviewTooLarge:
            raise
        except Exception:  # what the container's own analysis reports; no pairing on it
            return None
        if cfg is not None:
            found.append(cfg)
    if len(found) != 1:
        return None
    cfg = found[0]
    nnodes = _int_of(cfg, "nnodes")
    if cfg.engine not in ("sglang", "vllm") or nnodes is None or nnodes < 2 or "node_rank" in cfg.unresolved:
        return None
    if "node_rank" in cfg.flags and _int_of(cfg, "node_rank") is None:
        return None
    rank = _int_of(cfg, "node_rank") or 0
    if node_address(cfg) is None or not 0 <= rank < nnodes:
        return None
    return rank, cfg


#: The file names ``kustomize build`` reads a kustomization from
_KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def _input_of(w: Workload) -> str:
    """The input ``w`` was read from, for :func:`pair_node_objects`: the chart a rendered template belongs to (its
    ``templates/`` directory's parent holding ``Chart.yaml``, :func:`kvlint.origins._chart_of`: a chart's leader and
    worker are often two templates, ``templates/leader.yaml`` and ``templates/worker.yaml``), the directory of a
    kustomization whose resource file it is (``resources: [leader.yaml, worker.yaml]`` beside it; a resource from
    another directory, ``../base``, keeps that directory's), else its file."""
    from kvlint.origins import _chart_of

    path = w.doc.path
    if not path:
        return path
    chart = _chart_of(path)
    if chart is not None:
        return chart
    folder = os.path.dirname(path) or "."
    if any(os.path.isfile(os.path.join(folder, k)) for k in _KUSTOMIZATION_FILES):
        return folder
    return path


def pair_node_objects(
    workloads: Sequence[Workload],
    configmaps: Mapping[tuple[str | None, str], LDict] | None = None,
    engine_version: str | None = None,
) -> list[Workload]:
    """``workloads`` with hand-rolled multi-node engines joined: a node per object, each a Pod or a one-replica
    Deployment / StatefulSet / ReplicaSet (no LeaderWorkerSet or other group around it), running the same engine
    at the same release with the same model, ``--nnodes N`` and meeting address (:func:`node_address`: SGLang's
    ``--dist-init-addr``, vLLM's ``--master-addr``/``--master-port``), in the same namespace and input (one file, one
    rendered chart or kustomization, :func:`_input_of`: the unit :mod:`kvlint.stream` analyses at once, so that a
    streamed run and a whole one agree), whose ``--node-rank``
    values are exactly 0 .. N-1. The node-rank-0 object becomes the group's ``leader`` and the others its
    ``worker`` templates with :attr:`~kvlint.types.Workload.leader` set, so that each follower joins the leader's engine
    when its settings are the leader's (:func:`join_follower`) and the leader is sized as the group (KV403 counts the
    N pods' GPUs). A rank missing, repeated or read from a variable leaves every object as it was (the rank-0 node
    then waits for ranks no pod runs: KV403's lone-node finding). Never raises on user input (ReviewTooLarge
    passes through)."""
    groups: dict[tuple[str, str | None, str, int, str | None, str | None, str], list[tuple[int, int]]] = {}
    for i, w in enumerate(workloads):
        if w.kind not in ONE_POD_KINDS or (w.replicas if w.replicas is not None else 1) != 1:
            continue
        if w.leader is not None or w.role is not None or (w.group_size or 0) > 1:
            continue
        if "nnodes" not in json.dumps(w.pod_spec, default=str):
            continue
        node = _node_of(w, configmaps, engine_version)
        if node is None:
            continue
        rank, cfg = node
        model = cfg.model.value if cfg.model is not None else None
        key = (
            cfg.engine,
            cfg.version,
            str(model),
            _int_of(cfg, "nnodes") or 0,
            node_address(cfg),
            w.namespace,
            _input_of(w),
        )
        groups.setdefault(key, []).append((rank, i))
    out = list(workloads)
    for key, members in groups.items():
        if sorted(rank for rank, _i in members) != list(range(key[3])):
            continue
        lead_i = next(i for rank, i in members if rank == 0)
        leader = replaced(workloads[lead_i], role="leader")
        out[lead_i] = leader
        for rank, i in members:
            if rank:
                out[i] = replaced(workloads[i], role="worker", leader=leader)
    return out
