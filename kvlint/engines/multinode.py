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

from collections.abc import Mapping

from kvlint.source import LDict
from kvlint.types import Finding, ServingConfig, Workload

__all__ = ["find_leader"]


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
    from kvlint.engines.command import parse_container
    from kvlint.engines.shell import ReviewTooLarge

    joins = serving.joins
    if joins is None:
        return
    if w.leader is None:
        _note(serving, "no leader or head pod template of that engine is in the same object")
        return
    lw = w.leader
    containers = lw.pod_spec.get("containers")
    for c in containers if isinstance(containers, list) else []:
        if not isinstance(c, LDict):
            continue
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
        if cfg is not None and cfg.joins is None and (cfg.model is not None or cfg.flags):
            joins.leader = cfg
            joins.leader_container = cfg.container_name
            return
    _note(serving, f"the engine command of its leader ({lw.path}) cannot be read either (see its findings)")


def _note(serving: ServingConfig, why: str) -> None:
    joins = serving.joins
    assert joins is not None
    serving.findings.append(
        Finding(
            "KV503",
            f"this multi-node worker runs no engine of its own (`{joins.how}` joins the leader's): {why}, so its "
            "GPUs are not checked against the engine's layout",
            joins.loc,
            fix="lint the leader together with its workers (they are checked against its tensor- and "
            "pipeline-parallel sizes)",
            severity="info",
        )
    )
