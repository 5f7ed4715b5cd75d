"""Tests for kvlint.workloads: PodSpec discovery across kinds, metadata merge, ConfigMap-mounted files."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from kvlint.load import load_paths, load_text
from kvlint.source import LDict, Loc, loc_of
from kvlint.workloads import configmaps, find_workloads, mounted_file, mounted_file_mode, object_ref

#: The shared data folder beside the checkout (tests that read it skip when it is absent).
SHARED = Path(__file__).resolve().parents[1].parent / "shared"

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures" / "load"
CORPUS = SHARED / "corpus/manifests"


def _load(name: str):
    return load_paths([str(FIX / name)])


def _line_of(path: Path, needle: str) -> int:
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if needle in line:
            return i
    raise AssertionError(needle)


# ------------------------------------------------------------------------------------------------ corpus


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not available")
def test_every_corpus_manifest():
    rows = list(csv.DictReader(open(CORPUS / "INDEX.csv")))
    checked = 0
    for row in rows:
        path = CORPUS / row["file"]
        if not path.exists():
            continue
        r = load_paths([str(path)])
        ws = find_workloads(r.documents)  # must not raise
        for w in ws:
            assert isinstance(w.pod_spec, LDict) and isinstance(w.pod_spec.get("containers"), list)
            assert w.loc is not None and w.loc.file == str(path)
        kinds = row["kind(s)"]
        parsed = not r.findings  # malformed files and Helm templates are KV001/KV002, not workloads
        if parsed and any(k in kinds for k in ("Deployment", "StatefulSet", "LeaderWorkerSet", "RayService")):
            assert ws, f"no workload found in {row['file']} ({kinds})"
            checked += 1
    assert checked >= 40


# ------------------------------------------------------------------------------------------------ kinds


def test_leaderworkerset_roles_and_group_size():
    r = _load("kubernetes-sigs__lws__docs__examples__vllm__GPU__lws.yaml")
    ws = find_workloads(r.documents)
    assert [(w.kind, w.role, w.group_size, w.replicas) for w in ws] == [
        ("LeaderWorkerSet", "leader", 2, 2),
        ("LeaderWorkerSet", "worker", 2, 2),
    ]
    leader, worker = ws
    assert leader.path == "spec.leaderWorkerTemplate.leaderTemplate.spec"
    assert worker.path == "spec.leaderWorkerTemplate.workerTemplate.spec"
    assert leader.pod_spec["containers"][0]["name"] == "vllm-leader"
    assert leader.labels == {"role": "leader"}
    assert object_ref(leader) == "LeaderWorkerSet/vllm"


def test_leaderworkerset_without_leader_template_reads_it_as_leader_and_workers():
    # LWS builds the leader pod from the workerTemplate when there is no leaderTemplate (kubernetes-sigs/lws
    # leaderworkerset_controller.go constructLeaderStatefulSetApplyConfiguration); it was read as a worker only
    text = (
        "kind: LeaderWorkerSet\nmetadata: {name: x, namespace: ns}\nspec:\n  replicas: 3\n"
        "  leaderWorkerTemplate:\n    size: 4\n    workerTemplate:\n      spec:\n"
        "        containers: [{name: w, image: vllm/vllm-openai}]\n"
    )
    ws = find_workloads(load_text(text, "l.yaml").documents)
    assert [(w.role, w.group_size, w.replicas) for w in ws] == [("leader", 4, 3), ("worker", 4, 3)]
    assert ws[1].leader is ws[0]
    assert object_ref(ws[0]) == "LeaderWorkerSet/ns/x"
    # a group of one pod (size 1, LWS's default) is the leader alone: its worker StatefulSet has 0 replicas
    for one in (text.replace("size: 4", "size: 1"), text.replace("    size: 4\n", "")):
        ws = find_workloads(load_text(one, "l.yaml").documents)
        assert [w.role for w in ws] == ["leader"]


POD = "containers: [{name: c, image: img}]"


@pytest.mark.parametrize(
    "kind,body,path",
    [
        ("Pod", f"spec: {{{POD}}}", "spec"),
        ("Deployment", f"spec: {{replicas: 2, template: {{spec: {{{POD}}}}}}}", "spec.template.spec"),
        ("StatefulSet", f"spec: {{template: {{spec: {{{POD}}}}}}}", "spec.template.spec"),
        ("DaemonSet", f"spec: {{template: {{spec: {{{POD}}}}}}}", "spec.template.spec"),
        ("Job", f"spec: {{template: {{spec: {{{POD}}}}}}}", "spec.template.spec"),
        (
            "CronJob",
            f"spec: {{jobTemplate: {{spec: {{template: {{spec: {{{POD}}}}}}}}}}}",
            "spec.jobTemplate.spec.template.spec",
        ),
        (
            "JobSet",
            f"spec: {{replicatedJobs: [{{replicas: 2, template: {{spec: {{template: {{spec: {{{POD}}}}}}}}}}}]}}",
            "spec.replicatedJobs[0].template.spec.template.spec",
        ),
    ],
)
def test_kinds(kind, body, path):
    ws = find_workloads(load_text(f"kind: {kind}\nmetadata: {{name: n}}\n{body}\n", "k.yaml").documents)
    assert [w.path for w in ws] == [path]
    assert ws[0].pod_spec["containers"][0]["image"] == "img"
    if kind in ("Deployment", "JobSet"):
        assert ws[0].replicas == 2


def test_labels_and_annotations_template_wins():
    text = (
        "kind: Deployment\nmetadata:\n  name: d\n  labels: {app: a, tier: obj}\n  annotations: {kvlint.io/accelerator: L4}\n"
        "spec:\n  template:\n    metadata:\n      labels: {tier: pod}\n      annotations: {x: 1}\n"
        f"    spec: {{{POD}}}\n"
    )
    (w,) = find_workloads(load_text(text, "d.yaml").documents)
    assert w.labels == {"app": "a", "tier": "pod"}
    assert w.annotations == {"kvlint.io/accelerator": "L4", "x": "1"}


def test_kserve_inferenceservice_model_is_a_synthetic_container(tmp_path: Path) -> None:
    # a model format kvlint does not map to a runtime container (the sample's huggingface one with
    # --backend=huggingface is now a KV503 note, test_kserve_hf.py): the model spec is the container
    src = FIX / "kserve__kserve__docs__samples__storage__hf__hf_isvc.yaml"
    p = tmp_path / src.name
    p.write_text(src.read_text().replace("name: huggingface", "name: pytorch"))
    r = load_paths([str(p)])
    (w,) = find_workloads(r.documents)
    assert w.kind == "InferenceService" and w.path == "spec.predictor.model"
    model = r.documents[0].data["spec"]["predictor"]["model"]
    c = w.pod_spec["containers"][0]
    assert c is model  # the loaded mapping itself: all positions inside it are real
    args = c["args"]
    assert loc_of(args, 1) == Loc(str(p), _line_of(p, "--model_dir"), 9)
    assert w.pod_spec["serviceAccountName"] == "hfserviceacc"
    assert loc_of(w.pod_spec, "serviceAccountName").line == _line_of(p, "serviceAccountName")
    assert "model" not in w.pod_spec


def test_rayservice_head_and_worker_groups():
    r = _load("awslabs__ai-on-eks__blueprints__inference__vllm-rayserve-gpu__ray-service-vllm.yaml")
    ws = find_workloads(r.documents)
    assert [(w.path, w.role) for w in ws] == [
        ("spec.rayClusterConfig.headGroupSpec.template.spec", "head"),
        ("spec.rayClusterConfig.workerGroupSpecs[0].template.spec", "worker"),
    ]
    assert (
        ws[1].replicas == r.documents[-1].data["spec"]["rayClusterConfig"]["workerGroupSpecs"][0]["replicas"]
    )


def test_servingruntime_worker_spec_is_separate_and_not_double_counted():
    r = _load("kserve__kserve__config__runtimes__kserve-huggingfaceserver-multinode.yaml")
    ws = find_workloads(r.documents)
    # the runtime's own containers are the Ray head its workerSpec pods join (as in the InferenceService)
    assert [(w.path, w.role) for w in ws] == [("spec", "head"), ("spec.workerSpec", "worker")]
    assert ws[1].leader is not None and ws[1].leader.path == "spec"
    assert len({id(w.pod_spec) for w in ws}) == 2


def test_openshift_template_wrapping_servingruntime():
    r = _load("opendatahub-io__odh-model-controller__config__runtimes__vllm__vllm-cuda-template.yaml")
    (w,) = find_workloads(r.documents)
    assert w.kind == "Template" and w.path == "objects[0].spec"
    assert w.pod_spec["containers"][0]["name"] == "kserve-container"


def test_ome_runner_leader_worker():
    r = _load("sgl-project__ome__config__runtimes__srt__deepseek-rdma-rt.yaml")
    ws = {w.path: w for w in find_workloads(r.documents)}
    assert ws["spec.engineConfig.leader.runner"].role == "leader"
    assert ws["spec.engineConfig.worker.runner"].role == "worker"
    runner = r.documents[0].data["spec"]["engineConfig"]["leader"]["runner"]
    # the runner, with the env OME and its LeaderWorkerSet add (the runtime names its model and GPUs: sized)
    container = ws["spec.engineConfig.leader.runner"].pod_spec["containers"][0]
    assert container["command"] is runner["command"]
    env = {e["name"]: e["value"] for e in container["env"] if "value" in e}
    assert (env["PARALLELISM_SIZE"], env["LWS_GROUP_SIZE"], env["LWS_WORKER_INDEX"]) == ("16", "2", "0")
    assert "PARALLELISM_SIZE" not in {e["name"] for e in runner["env"]}  # the loaded object is not changed


def test_odd_shapes_never_raise():
    text = (
        "kind: Deployment\nmetadata: just-a-string\nspec: {template: {spec: {containers: oops}}}\n---\n"
        "kind: Pod\nspec: [1, 2]\n---\nkind: StatefulSet\nspec: {template: {spec: {containers: [1, x, null]}}}\n---\n"
        "- a\n---\nkind: LeaderWorkerSet\nspec: {leaderWorkerTemplate: [x]}\n---\n"
        "kind: InferenceService\nspec: {predictor: {model: 3}}\n---\n"
        f"kind: Deployment\nmetadata: {{name: ok, labels: [x]}}\nspec: {{template: {{metadata: 5, spec: {{{POD}}}}}}}\n"
    )
    r = load_text(text, "odd.yaml")
    ws = find_workloads(r.documents)
    assert [w.name for w in ws] == ["ok"]
    assert ws[0].labels == {} and ws[0].annotations == {}


# ------------------------------------------------------------------------------------------------ ConfigMaps


def test_mounted_chat_template_from_configmap():
    p = FIX / "GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__adk-vllm__deploy-llm__deploy-llm.yaml"
    r = load_paths([str(p)])
    cms = configmaps(r.documents)
    assert (None, "llama-chat-templates") in cms
    (w,) = find_workloads(r.documents)
    c = w.pod_spec["containers"][0]
    path = "/templates/tool_chat_template_llama3.1_json.jinja"
    assert any(a == f"--chat-template={path}" for a in c["args"])
    got = mounted_file(w.pod_spec, c, path, cms)
    assert got is not None
    text, loc = got
    assert text.startswith("{{- bos_token }}")
    assert loc is not None and loc.line == _line_of(p, "tool_chat_template_llama3.1_json.jinja: |")
    assert mounted_file(w.pod_spec, c, "/templates/other.jinja", cms) is None
    assert mounted_file(w.pod_spec, c, "/dev/shm/x", cms) is None


def test_mounted_file_subpath_items_and_namespaces():
    text = """\
kind: ConfigMap
metadata: {name: vllm-cfg, namespace: prod}
data:
  config.yaml: |
    max-model-len: 8192
  other: "x"
---
kind: ConfigMap
metadata: {name: vllm-cfg, namespace: dev}
data:
  config.yaml: "max-model-len: 1024"
---
kind: Deployment
metadata: {name: d, namespace: prod}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.11.0
        volumeMounts:
        - {name: cfg, mountPath: /etc/vllm/config.yaml, subPath: config.yaml}
        - {name: renamed, mountPath: /etc/renamed}
        - {name: proj, mountPath: /etc/proj}
      volumes:
      - {name: cfg, configMap: {name: vllm-cfg}}
      - name: renamed
        configMap: {name: vllm-cfg, items: [{key: config.yaml, path: engine/args.yaml}]}
      - name: proj
        projected: {sources: [{configMap: {name: vllm-cfg}}]}
"""
    r = load_text(text, "m.yaml")
    cms = configmaps(r.documents)
    assert set(cms) == {("prod", "vllm-cfg"), ("dev", "vllm-cfg")}
    (w,) = find_workloads(r.documents)
    c = w.pod_spec["containers"][0]
    got = mounted_file(w.pod_spec, c, "/etc/vllm/config.yaml", cms, namespace=w.namespace)
    assert got == ("max-model-len: 8192\n", Loc("m.yaml", 4, 16))
    got = mounted_file(w.pod_spec, c, "/etc/vllm/config.yaml", cms, namespace="dev")
    assert got is not None and got[0] == "max-model-len: 1024"
    # name alone is ambiguous between two namespaces
    assert mounted_file(w.pod_spec, c, "/etc/vllm/config.yaml", cms, namespace="other") is None
    got = mounted_file(w.pod_spec, c, "/etc/renamed/engine/args.yaml", cms, namespace="prod")
    assert got is not None and got[0].startswith("max-model-len: 8192")
    assert mounted_file(w.pod_spec, c, "/etc/renamed/config.yaml", cms, namespace="prod") is None
    got = mounted_file(w.pod_spec, c, "/etc/proj/other", cms, namespace="prod")
    assert got is not None and got[0] == "x"
    # odd input does not raise
    assert mounted_file(LDict(), LDict(), "/etc/vllm/config.yaml", cms) is None
    assert mounted_file(w.pod_spec, c, "", cms) is None


def test_mounted_file_is_read_from_the_deepest_mount() -> None:
    """The runtime mounts a pod's volumes in order of path depth (containerd withMounts), so a deeper mount
    shadows what a shallower ConfigMap mount holds at the same path: the file the container sees is the
    deeper one's (another ConfigMap's key, or nothing kvlint can read), whatever the volumeMounts order."""
    head = """\
kind: ConfigMap
metadata: {name: dir}
data:
  start.sh: "exec vllm serve org/dir-model"
  conf: "shallow"
---
kind: ConfigMap
metadata: {name: file}
data:
  start.sh: "exec vllm serve org/file-model"
---
kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      volumes:
      - {name: dir, configMap: {name: dir, items: [{key: start.sh, path: start.sh}, {key: conf, path: x/c.yaml}]}}
      - {name: file, configMap: {name: file}}
      - {name: scratch, emptyDir: {}}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.11.0
        volumeMounts:
"""
    dir_mount = "        - {name: dir, mountPath: /scripts}\n"
    file_mount = "        - {name: file, mountPath: /scripts/start.sh, subPath: start.sh}\n"
    scratch = "        - {name: scratch, mountPath: /scripts/x}\n"
    for mounts in (dir_mount + file_mount + scratch, scratch + file_mount + dir_mount):
        r = load_text(head + mounts, "m.yaml")
        cms = configmaps(r.documents)
        (w,) = find_workloads(r.documents)
        c = w.pod_spec["containers"][0]
        got = mounted_file(w.pod_spec, c, "/scripts/start.sh", cms)
        assert got is not None and got[0] == "exec vllm serve org/file-model"
        # an emptyDir over /scripts/x hides the ConfigMap's x/c.yaml
        assert mounted_file(w.pod_spec, c, "/scripts/x/c.yaml", cms) is None
        # a path spelt with a leading '//' is the same file (Linux reads it as '/')
        got = mounted_file(w.pod_spec, c, "//scripts/start.sh", cms)
        assert got is not None and got[0] == "exec vllm serve org/file-model"
    r = load_text(head + dir_mount, "m.yaml")
    (w,) = find_workloads(r.documents)
    got = mounted_file(w.pod_spec, w.pod_spec["containers"][0], "/scripts/x/c.yaml", configmaps(r.documents))
    assert got is not None and got[0] == "shallow"


def test_mounted_file_mode_follows_items_then_the_volume_default() -> None:
    """The mode of a ConfigMap file: the item's ``mode``, else the volume's ``defaultMode`` (a projected
    volume's own for its sources), else the API default 0644; None for a path no ConfigMap holds or a mode the
    API server rejects."""
    text = """\
kind: ConfigMap
metadata: {name: s}
data: {a.sh: "#!/bin/sh", b.sh: "#!/bin/sh"}
---
kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      volumes:
      - {name: plain, configMap: {name: s}}
      - {name: exec, configMap: {name: s, defaultMode: 0755, items: [{key: a.sh, path: a.sh, mode: 0700}, {key: b.sh, path: b.sh}]}}
      - {name: proj, projected: {defaultMode: 0555, sources: [{configMap: {name: s}}]}}
      - {name: bad, configMap: {name: s, defaultMode: 4096}}
      containers:
      - name: c
        image: x
        volumeMounts:
        - {name: plain, mountPath: /plain}
        - {name: exec, mountPath: /exec}
        - {name: proj, mountPath: /proj}
        - {name: bad, mountPath: /bad}
"""
    r = load_text(text, "m.yaml")
    cms = configmaps(r.documents)
    (w,) = find_workloads(r.documents)
    c = w.pod_spec["containers"][0]
    modes = {
        p: mounted_file_mode(w.pod_spec, c, p, cms)
        for p in ("/plain/a.sh", "/exec/a.sh", "/exec/b.sh", "/proj/b.sh", "/bad/a.sh", "/none/a.sh")
    }
    assert modes == {
        "/plain/a.sh": 0o644,
        "/exec/a.sh": 0o700,
        "/exec/b.sh": 0o755,
        "/proj/b.sh": 0o555,
        "/bad/a.sh": None,
        "/none/a.sh": None,
    }


def test_a_runtime_linted_alone_gets_one_template_note_naming_its_own_gpus():
    # sgl-project/ome's gemma-2-27b-it runtime (fixtures/collected, source in its INDEX.csv): an SGLang engine
    # with `nvidia.com/gpu: 2` and a router, two workloads of one ClusterServingRuntime. Before, each got the
    # KV502 note, both saying "the model and the GPU count are not known here" although the engine declares 2.
    # (Its --served-model-name, a hub id, is made an alias here: a runtime naming its model is sized on it.)
    path = (
        ROOT
        / "fixtures"
        / "collected"
        / "sgl-project__ome__config__runtimes__srt__google__gemma-2-27b-it-rt.yaml"
    )
    text = path.read_text().replace("- google/gemma-2-27b-it", "- my-model")
    assert text != path.read_text()
    r = load_text(text, str(path))
    ws = find_workloads(r.documents)
    assert len(ws) == 2
    notes = [f for w in ws for f in w.findings if f.rule == "KV502"]
    assert len(notes) == 1
    (note,) = notes
    assert "nvidia.com/gpu: 2" in note.message and "GPU count are not known" not in note.message
    assert "OME InferenceService" in note.message


def test_a_runtime_without_gpu_limits_says_the_service_supplies_them():
    text = (
        "apiVersion: serving.kserve.io/v1alpha1\nkind: ClusterServingRuntime\nmetadata: {name: rt}\nspec:\n"
        "  containers:\n  - name: kserve-container\n    image: vllm/vllm-openai:v0.11.0\n"
        '    args: ["--model", "/mnt/models"]\n'
    )
    ((w,),) = [find_workloads(load_text(text, "rt.yaml").documents)]
    (note,) = [f for f in w.findings if f.rule == "KV502"]
    assert "the model and the GPU count are not known here" in note.message
