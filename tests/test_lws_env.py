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
    # LWS's value replaces the container's own of the same name (addEnvVarsIfNotExists from LWS v0.4.0 keeps only
    # the container's entries of other names), so the worker's LWS_WORKER_INDEX 7 is its index in the group, 1
    assert _env(worker)["LWS_WORKER_INDEX"] == "1" and _env(worker)["LWS_GROUP_SIZE"] == "2"
    (c,) = worker.pod_spec["containers"]
    assert [e["name"] for e in c["env"]] == ["LWS_GROUP_SIZE", "LWS_WORKER_INDEX", "LWS_LEADER_ADDRESS"]


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


# The worker index read from the pod label LWS sets (kubernetes-sigs/lws WorkerIndexLabelKey), through the downward
# API, as llmaz's multi-node Service example (docs/examples/multi-nodes/service.yaml) and many LWS manifests do.
FIELD_REF = """\
            env:
            - name: LWS_WORKER_INDEX
              valueFrom:
                fieldRef:
                  fieldPath: metadata.labels['leaderworkerset.sigs.k8s.io/worker-index']
            - name: GROUP
              valueFrom: {fieldRef: {fieldPath: "metadata.labels['leaderworkerset.sigs.k8s.io/group-index']"}}
            - name: SIZE
              valueFrom: {fieldRef: {fieldPath: "metadata.annotations['leaderworkerset.sigs.k8s.io/size']"}}
            - name: POD
              valueFrom: {fieldRef: {fieldPath: metadata.name}}
"""

LLMAZ = (
    """\
apiVersion: llmaz.io/v1alpha1
kind: OpenModel
metadata: {name: qwen}
spec:
  familyName: qwen2
  source: {modelHub: {modelID: Qwen/Qwen2.5-7B-Instruct}}
---
apiVersion: inference.llmaz.io/v1alpha1
kind: Service
metadata: {name: qwen}
spec:
  modelClaims: {models: [{name: qwen}]}
  replicas: 1
  workloadTemplate:
    size: 2
    leaderTemplate:
      spec:
        containers:
          - name: model-runner
            image: lmsysorg/sglang:v0.5.5
"""
    + FIELD_REF
    + """\
            command: [python3, -m, sglang.launch_server, --model-path, Qwen/Qwen2.5-7B-Instruct, --tp, "2",
                      --dist-init-addr, $(LWS_LEADER_ADDRESS):20000, --nnodes, $(LWS_GROUP_SIZE),
                      --node-rank, $(LWS_WORKER_INDEX), --context-length, "8192"]
            resources: {limits: {nvidia.com/gpu: "1"}}
    workerTemplate:
      spec:
        containers:
          - name: model-runner
            image: lmsysorg/sglang:v0.5.5
"""
    + FIELD_REF
    + """\
            command: [python3, -m, sglang.launch_server, --model-path, Qwen/Qwen2.5-7B-Instruct, --tp, "2",
                      --dist-init-addr, $(LWS_LEADER_ADDRESS):20000, --nnodes, $(LWS_GROUP_SIZE),
                      --node-rank, $(LWS_WORKER_INDEX), --context-length, "8192"]
            resources: {limits: {nvidia.com/gpu: "1"}}
"""
)


def test_worker_index_from_the_lws_label_is_the_pods_index() -> None:
    workloads = find_workloads(load_text(LLMAZ, "llmaz.yaml").documents)
    leader, worker = (w for w in workloads if w.pod_spec.get("containers"))
    assert _env(leader)["LWS_WORKER_INDEX"] == "0" and _env(worker)["LWS_WORKER_INDEX"] == "1"
    assert _env(leader)["GROUP"] == "0" and _env(worker)["SIZE"] == "2"
    # a field LWS does not set stays as written (kvlint cannot know the pod's name)
    assert _env(worker)["POD"] is None
    # the value is located at the fieldPath it comes from
    (c,) = worker.pod_spec["containers"]
    entry = next(e for e in c["env"] if e["name"] == "LWS_WORKER_INDEX")
    assert (
        entry.locs["value"].line
        == LLMAZ.splitlines().index(
            "                  fieldPath: metadata.labels['leaderworkerset.sigs.k8s.io/worker-index']", 40
        )
        + 1
    )


def test_the_worker_from_the_label_is_sized_with_its_leader_not_twice() -> None:
    result = run_documents(load_text(LLMAZ, "llmaz.yaml"), Options(allow_hub=False))
    unresolved = [d for d in result.diagnostics if d.rule == "KV503" and "cannot resolve" in d.message]
    assert unresolved == []
    # the worker (node rank 1) runs no scheduler of its own: only the leader's pod is planned, as for a
    # LeaderWorkerSet whose env LWS fills in
    planned = [d for d in result.diagnostics if d.rule == "KV501"]
    worker_line = LLMAZ.splitlines().index("    workerTemplate:") + 1
    assert len(planned) == 1 and planned[0].loc is not None and planned[0].loc.line < worker_line


ENV_ORDER = """\
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
          env:
          - {name: DIST_ADDR, value: "$(LWS_LEADER_ADDRESS):20000"}
          command: [python3, -m, sglang.launch_server, --model-path, Qwen/Qwen2.5-7B-Instruct, --tp, "2",
                    --nnodes, $(LWS_GROUP_SIZE), --node-rank, $(LWS_WORKER_INDEX), --dist-init-addr, $(DIST_ADDR)]
          resources: {limits: {nvidia.com/gpu: 1}}
    workerTemplate:
      spec:
        containers:
        - name: worker
          image: lmsysorg/sglang:v0.5.5
          env: [{name: LWS_GROUP_SIZE, value: "4"}]
          command: [python3, -m, sglang.launch_server, --model-path, Qwen/Qwen2.5-7B-Instruct, --tp, "2",
                    --nnodes, $(LWS_GROUP_SIZE), --node-rank, $(LWS_WORKER_INDEX),
                    --dist-init-addr, $(LWS_LEADER_ADDRESS):20000]
          resources: {limits: {nvidia.com/gpu: 1}}
"""


def test_lws_env_comes_first_and_replaces_the_containers_own() -> None:
    """LWS puts its variables at the head of each container's env and drops the container's entries of the same
    names (kubernetes-sigs/lws pkg/utils/pod/pod_utils.go addEnvVarsIfNotExists, v0.4.0 and later): the leader's
    DIST_ADDR, built from $(LWS_LEADER_ADDRESS), resolves as the kubelet expands it (a reference to an earlier
    entry), and the worker's own LWS_GROUP_SIZE 4 is replaced by the group's size, 2. kvlint appended LWS's
    variables after the container's own and kept the container's values: the leader's --dist-init-addr stayed
    unresolved and the worker was read with --nnodes 4."""
    result = run_documents(load_text(ENV_ORDER, "lws.yaml"), Options(allow_hub=False))
    read = {cr.container_name: cr.serving for cr in result.containers}
    assert read["leader"].get("dist_init_addr") == "sglang-0.sglang.serving:20000"
    assert read["worker"].get("nnodes") == 2 and read["leader"].get("nnodes") == 2


def test_a_worker_template_without_leader_template_is_also_the_leader() -> None:
    """Without a leaderTemplate LWS builds the leader pod from the workerTemplate (kubernetes-sigs/lws
    pkg/controllers/leaderworkerset_controller.go constructLeaderStatefulSetApplyConfiguration): the template runs
    as the leader, worker index 0, and as the workers; kvlint read it only as a worker, index 1."""
    one = (
        LWS.split("    leaderTemplate:\n")[0]
        + "    workerTemplate:\n"
        + LWS.split("    workerTemplate:\n")[1]
    )
    one = one.replace('          env: [{name: LWS_WORKER_INDEX, value: "7"}]\n', "")
    result = run_documents(load_text(one, "lws.yaml"), Options(allow_hub=False))
    assert [cr.serving.get("node_rank") for cr in result.containers] == [0, 1]
    assert not [d for d in result.diagnostics if d.rule == "KV503"]


def test_a_group_of_size_one_has_no_worker_pods() -> None:
    """LWS's pod controller creates no worker StatefulSet for a group of size 1 (kubernetes-sigs/lws
    pkg/controllers/pod_controller.go: "Once size = 1, no need to create worker statefulSets"), and an absent
    size is 1 (the API's default): the workerTemplate beside a leaderTemplate runs in no pod then, and kvlint read
    it as a worker of index 1 (its findings doubled, --node-rank 1 of --nnodes 1)."""
    one = LWS.replace("size: 2", "size: 1").replace('--tp, "2"', '--tp, "1"')
    result = run_documents(load_text(one, "lws.yaml"), Options(allow_hub=False))
    assert [(cr.container_name, cr.serving.get("node_rank")) for cr in result.containers] == [("leader", 0)]
    assert [cr.serving.get("nnodes") for cr in result.containers] == [1]
    # without size: the default 1 is the LWS_GROUP_SIZE the pods get
    absent = one.replace("    size: 1\n", "")
    result = run_documents(load_text(absent, "lws.yaml"), Options(allow_hub=False))
    assert [(cr.container_name, cr.serving.get("nnodes")) for cr in result.containers] == [("leader", 1)]
    assert not [d for d in result.diagnostics if d.rule == "KV503" and "LWS_GROUP_SIZE" in d.message]
    # size 2 keeps the worker
    two = run_documents(load_text(LWS, "lws.yaml"), Options(allow_hub=False))
    assert [cr.container_name for cr in two.containers] == ["leader", "worker"]
