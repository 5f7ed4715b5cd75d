"""LeaderWorkerSet env: LWS puts LWS_GROUP_SIZE, LWS_WORKER_INDEX and LWS_LEADER_ADDRESS in every container of a
group's pods (kubernetes-sigs/lws pkg/utils/pod/pod_utils.go AddLWSVariables), so an engine command that reads
them (SGLang's ``--node-rank $(LWS_WORKER_INDEX) --dist-init-addr $(LWS_LEADER_ADDRESS):20000``) is resolved,
not reported as a variable kvlint cannot read."""

from __future__ import annotations

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.workloads import find_workloads

LWS = """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: sglang, namespace: serving}
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 2
    leaderTemplate:
      spec:
        containers:
        - name: leader
          image: lmsysorg/sglang:v0.5.5
          command: [python3, -m, sglang.launch_server, --model-path, Qwen/Qwen2.5-7B-Instruct, --tp, "2",
                    --nnodes, $(LWS_GROUP_SIZE), --node-rank, $(LWS_WORKER_INDEX),
                    --dist-init-addr, $(LWS_LEADER_ADDRESS):20000]
          resources: {limits: {nvidia.com/gpu: 1}}
    workerTemplate:
      spec:
        containers:
        - name: worker
          image: lmsysorg/sglang:v0.5.5
          command: [python3, -m, sglang.launch_server, --model-path, Qwen/Qwen2.5-7B-Instruct, --tp, "2",
                    --nnodes, $(LWS_GROUP_SIZE), --node-rank, $(LWS_WORKER_INDEX),
                    --dist-init-addr, $(LWS_LEADER_ADDRESS):20000]
          env: [{name: LWS_WORKER_INDEX, value: "7"}]
          resources: {limits: {nvidia.com/gpu: 1}}
"""


def _env(workload) -> dict[str, str]:
    (c,) = workload.pod_spec["containers"]
    return {e["name"]: e.get("value") for e in c["env"]}


def test_lws_injects_group_size_worker_index_and_leader_address() -> None:
    leader, worker = find_workloads(load_text(LWS, "lws.yaml").documents)
    assert _env(leader) == {
        "LWS_GROUP_SIZE": "2",
        "LWS_WORKER_INDEX": "0",
        "LWS_LEADER_ADDRESS": "sglang-0.sglang.serving",
    }
    # a name the container sets itself wins, as addEnvVarsIfNotExists keeps it
    assert _env(worker)["LWS_WORKER_INDEX"] == "7" and _env(worker)["LWS_GROUP_SIZE"] == "2"


def test_unique_per_replica_subdomain() -> None:
    text = LWS.replace(
        "  replicas: 1\n", "  replicas: 1\n  networkConfig: {subdomainPolicy: UniquePerReplica}\n"
    )
    leader, _ = find_workloads(load_text(text, "lws.yaml").documents)
    assert _env(leader)["LWS_LEADER_ADDRESS"] == "sglang-0.sglang-0.serving"


def test_node_rank_and_dist_init_addr_are_not_unresolved_variables() -> None:
    result = run_documents(load_text(LWS, "lws.yaml"), Options(allow_hub=False))
    unresolved = [d for d in result.diagnostics if d.rule == "KV503" and "cannot resolve" in d.message]
    assert unresolved == []
