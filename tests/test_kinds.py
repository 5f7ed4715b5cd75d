"""The kinds ``kvlint check`` reads pods from and the kinds the admission webhook reviews come from one table,
kvlint.kinds.WORKLOAD_KINDS: these tests fail when the workload readers name a kind the table lacks, when the
webhook's list or the chart's generated file drifts from it, and when a kind the webhook does not review is
not explained in docs/webhook.md. (tests/test_chart.py renders the chart with helm and checks its rules and
owner filter against REVIEWED_KINDS, and deploy/webhook/kvlint-webhook.yaml against the chart.)
"""

from __future__ import annotations

import ast
import importlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kvlint.chart_match import CHART_MATCH_FILE, CHART_SHAPES, chart_shape, render_chart_match
from kvlint.engines.images import ENGINE_IMAGE_WORDS
from kvlint.kinds import WORKLOAD_KINDS
from kvlint.load import load_text
from kvlint.webhook.request_options import webhook_options
from kvlint.webhook.review import (
    DEFAULT_TRUSTED_CONTROLLERS,
    REVIEWED_KINDS,
    WebhookSettings,
    lint_review,
    parse_review,
    skip_reason,
)
from kvlint.workloads.find import CRD_READERS, JOINED_KINDS, POD_TEMPLATE_PATHS, PROVIDER_KINDS

ROOT = Path(__file__).resolve().parent.parent
ROLESET = (
    ROOT
    / "fixtures"
    / "collected"
    / "vllm-project__aibrix__config__samples__orchestration_v1alpha1_roleset.yaml"
)

#: Kinds the code compares an object's kind with that are not pod templates: a ConfigMap is read for the
#: files it mounts into a workload's pods (kvlint.workloads.configmaps), a GKE ComputeClass and a Karpenter
#: NodePool for the GPU of the nodes a pod selects by them (kvlint.accelerators.placement); they run nothing. An
#: OpenShift AI HardwareProfile is read for what its webhook writes into an InferenceService
#: (kvlint.workloads.hardwareprofile), a NIM Operator NIMCache for what the NIMService naming it may run
#: (kvlint.workloads.nim.nim_cache_clause), a DRA ResourceClaim or ResourceClaimTemplate for the GPUs a pod's
#: containers take through it (kvlint.workloads.dra), an OME BaseModel/ClusterBaseModel for the runtime OME
#: selects for the InferenceService naming it (kvlint.workloads.ome_select), an llmaz OpenModel for the model of
#: the Playground claiming it (kvlint.workloads.llmaz).
NOT_WORKLOADS = {
    "ConfigMap",
    "ComputeClass",
    "NodePool",
    "HardwareProfile",
    "NIMCache",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "BaseModel",
    "ClusterBaseModel",
    "OpenModel",
    # core kinds beside a workload, and kustomize's own kinds (the loader's missing-apiVersion KV001 names them)
    "Secret",
    "Service",
    "PersistentVolumeClaim",
    "Namespace",
    "ServiceAccount",
    "Kustomization",
    "Component",
}

_KIND_LIKE = re.compile(r"^[A-Z]\w*[a-z]\w*$")  # CamelCase, not an ALL-CAPS watch event type


def _is_kind(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "kind") or (
        isinstance(node, ast.Attribute) and node.attr == "kind"
    )


def _strings(node: ast.AST, module: Any) -> Iterator[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        for e in node.elts:
            yield from _strings(e, module)
    elif isinstance(node, ast.Name) and isinstance(
        getattr(module, node.id, None), (dict, set, frozenset, tuple)
    ):
        yield from (x for x in getattr(module, node.id) if isinstance(x, str))


def kinds_named_in_code() -> dict[str, set[str]]:
    """Every kind name kvlint's code compares an object's ``kind`` with (``kind == "X"``, ``doc.kind in
    TABLE``, ``TABLE.get(doc.kind)``; a module-level table is read from the imported module), with the files
    that do."""
    out: dict[str, set[str]] = {}
    for f in sorted((ROOT / "kvlint").rglob("*.py")):
        rel = f.relative_to(ROOT)
        tree = ast.parse(f.read_text(encoding="utf-8"))
        module = None
        for node in ast.walk(tree):
            cands: list[ast.AST] = []
            if isinstance(node, ast.Compare):
                ops = [node.left, *node.comparators]
                if any(_is_kind(o) for o in ops):
                    cands = [o for o in ops if not _is_kind(o)]
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get"
                and node.args
                and _is_kind(node.args[0])
            ):
                cands = [node.func.value]
            if not cands:
                continue
            if module is None:
                module = importlib.import_module(
                    ".".join(rel.with_suffix("").parts).removesuffix(".__init__")
                )
            for c in cands:
                for s in _strings(c, module):
                    if _KIND_LIKE.match(s):
                        out.setdefault(s, set()).add(str(rel))
    return out


def test_every_kind_the_workload_readers_name_is_in_the_table() -> None:
    """A kind added to the CLI (a reader in CRD_READERS, a fixed path, a kind compared anywhere in kvlint)
    and not to WORKLOAD_KINDS fails here; WORKLOAD_KINDS then decides whether the webhook reviews it."""
    table = {(k.group, k.kind) for k in WORKLOAD_KINDS}
    names = {k.kind for k in WORKLOAD_KINDS}
    assert set(CRD_READERS) <= table, sorted(set(CRD_READERS) - table)
    builtin = {k.kind for k in WORKLOAD_KINDS if k.operator == "Kubernetes"}
    assert set(POD_TEMPLATE_PATHS) == builtin
    assert JOINED_KINDS | PROVIDER_KINDS <= names
    found = kinds_named_in_code()
    # the scan itself finds kinds compared in each way (so an empty scan cannot pass)
    assert {"LeaderWorkerSet", "InferenceSet", "Template", "Playground", "Workspace", "ConfigMap"} <= set(
        found
    )
    missing = {k: sorted(v) for k, v in found.items() if k not in names | NOT_WORKLOADS}
    assert not missing, missing


def test_the_table_has_one_entry_per_kind_and_a_reason_for_each_kind_not_reviewed() -> None:
    keys = [(k.group, k.kind) for k in WORKLOAD_KINDS]
    assert len(keys) == len(set(keys))
    assert all(
        k.resource == k.resource.lower() and k.scope in ("Namespaced", "Cluster") for k in WORKLOAD_KINDS
    )
    doc = " ".join((ROOT / "docs" / "webhook.md").read_text(encoding="utf-8").split())
    for k in WORKLOAD_KINDS:
        assert f"{k.kind} ({k.group or 'core'})" in doc, f"docs/webhook.md does not list {k.kind} ({k.group})"
        if not k.reviewed:
            assert len(k.why_not) > 40


def test_the_webhook_reviews_exactly_the_reviewed_kinds_of_the_table() -> None:
    assert REVIEWED_KINDS == {(k.group, k.kind): (k.resource, k.scope) for k in WORKLOAD_KINDS if k.reviewed}
    assert ("orchestration.aibrix.ai", "RoleSet") in REVIEWED_KINDS
    assert ("kaito.sh", "MultiRoleInference") not in REVIEWED_KINDS


def test_the_charts_match_file_is_generated_from_the_table() -> None:
    """deploy/helm/kvlint-webhook/webhook-match.yaml is tools/gen_webhook_kinds.py's output, and each
    built-in kind goes to the chart webhook whose pod spec path is the kind's fixed path."""
    import yaml

    committed = (ROOT / CHART_MATCH_FILE).read_text(encoding="utf-8")
    assert committed == render_chart_match(), "run: python tools/gen_webhook_kinds.py"
    match = yaml.safe_load(committed)
    assert [(r["group"], r["kind"]) for r in match["kinds"]] == list(REVIEWED_KINDS)
    assert match["engineImageWords"] == list(ENGINE_IMAGE_WORDS)
    assert "habana.ai/gaudi" in match["acceleratorResources"] and "-tgi" in match["engineImageWords"]
    for k in WORKLOAD_KINDS:
        if k.operator == "Kubernetes":
            assert chart_shape(k) == CHART_SHAPES[POD_TEMPLATE_PATHS[k.kind]]
    chart = ROOT / "deploy" / "helm" / "kvlint-webhook" / "templates" / "validatingwebhookconfiguration.yaml"
    text = chart.read_text(encoding="utf-8")
    for path, shape in CHART_SHAPES.items():  # the chart tests the pod spec where the CLI reads it
        assert f'"name" "{shape}" "spec" "object.{".".join(path)}"' in text


def test_the_generator_checks_and_writes(tmp_path: Path) -> None:
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import gen_webhook_kinds
    finally:
        sys.path.remove(str(ROOT / "tools"))
    out = tmp_path / "kinds.yaml"
    assert gen_webhook_kinds.main(["--check", "--output", str(out)]) == 1  # missing
    assert gen_webhook_kinds.main(["--output", str(out)]) == 0
    assert gen_webhook_kinds.main(["--check", "--output", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == render_chart_match()


#: The requester of a controller's write: the exemption of owned objects holds only for controller identities.
#: An operator's service account is trusted only when the admin adds it (``--trusted-controller``, the chart's
#: ``trustedOperators``), as :func:`_settings` does.
CONTROLLER = "system:serviceaccount:operators:controller-manager"


def _settings() -> WebhookSettings:
    """The webhook's default settings with the operator :data:`CONTROLLER` trusted beside the built-in controllers."""
    return WebhookSettings(trusted_controllers=(*DEFAULT_TRUSTED_CONTROLLERS, CONTROLLER))


def _review(obj: dict[str, Any], username: str = "alice") -> dict[str, Any]:
    """An AdmissionReview request for ``obj`` from ``username`` (a user; :data:`CONTROLLER` for what a
    controller writes)."""
    group, _, version = str(obj["apiVersion"]).rpartition("/")
    gvk = {"group": group, "version": version, "kind": obj["kind"]}
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u-1",
            "kind": gvk,
            "resource": {"group": group, "version": version, "resource": obj["kind"].lower() + "s"},
            "name": obj["metadata"]["name"],
            "namespace": "serving",
            "operation": "CREATE",
            "userInfo": {"username": username},
            "object": obj,
        },
    }


def _owned(obj: dict[str, Any], api: str, kind: str) -> dict[str, Any]:
    obj = json.loads(json.dumps(obj))
    obj["metadata"]["ownerReferences"] = [
        {"apiVersion": api, "kind": kind, "name": "owner", "uid": "0000", "controller": True}
    ]
    return obj


def test_a_roleset_is_reviewed_as_kvlint_check_reads_it_and_its_pods_are_not() -> None:
    """AIBrix's RoleSet sample: reviewed (kvlint check's finding on its vLLM container comes back), and a
    Pod the RoleSet controls is exempt; it was neither in REVIEWED_KINDS nor in the chart."""
    docs = load_text(ROLESET.read_bytes(), str(ROLESET)).documents
    (doc,) = [d for d in docs if d.kind == "RoleSet"]
    obj = json.loads(json.dumps(doc.data))
    settings = _settings()
    r = parse_review(json.dumps(_review(obj)))
    assert skip_reason(r, settings) is None
    kv503 = [d.message for d in lint_review(r, webhook_options()).diagnostics if d.rule == "KV503"]
    assert any("names no model" in m for m in kv503), kv503
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "roleset-sample-prefill-0"},
        "spec": obj["spec"]["roles"][0]["template"]["spec"],
    }
    owned = parse_review(
        json.dumps(_review(_owned(pod, "orchestration.aibrix.ai/v1alpha1", "RoleSet"), CONTROLLER))
    )
    assert skip_reason(owned, settings) is not None


def test_an_inferenceset_its_multiroleinference_controls_is_reviewed() -> None:
    """KAITO's MultiRoleInference holds no pod template; the InferenceSets its controller creates (one per
    role) are what kvlint reads, so they are reviewed although a MultiRoleInference controls them (they were
    exempt while the webhook reviewed MultiRoleInference)."""
    iset = {
        "apiVersion": "kaito.sh/v1alpha1",
        "kind": "InferenceSet",
        "metadata": {"name": "deepseek-v3-pd-prefill"},
        "spec": {"replicas": 1, "template": {"resource": {"instanceType": "Standard_NC24ads_A100_v4"}}},
    }
    r = parse_review(json.dumps(_review(_owned(iset, "kaito.sh/v1alpha1", "MultiRoleInference"), CONTROLLER)))
    assert skip_reason(r, _settings()) is None
    ws = parse_review(json.dumps(_review(_owned(iset, "kaito.sh/v1alpha1", "InferenceSet"), CONTROLLER)))
    assert skip_reason(ws, _settings()) is not None  # an InferenceSet's own children stay exempt


def test_what_aibrix_controllers_create_is_exempt_and_read_when_applied_by_hand() -> None:
    """A RayClusterFleet's RayClusterReplicaSets control its RayClusters, and a RoleSet's PodSets control its
    Pods: those RayClusters and Pods copy an object the webhook reviewed, so they are exempt (they were
    reviewed again, and in enforce mode the operator's write could be denied). A PodSet or
    RayClusterReplicaSet applied by hand is reviewed, and kvlint check reads its pod template."""
    from kvlint.workloads import find_workloads

    text = (
        "apiVersion: orchestration.aibrix.ai/v1alpha1\nkind: PodSet\nmetadata: {name: ps}\nspec:\n"
        "  podGroupSize: 2\n  template:\n    spec:\n      containers:\n      - name: vllm\n"
        "        image: vllm/vllm-openai:v0.11.0\n---\n"
        "apiVersion: orchestration.aibrix.ai/v1alpha1\nkind: RayClusterReplicaSet\nmetadata: {name: rs}\n"
        "spec:\n  replicas: 1\n  template:\n    spec:\n      headGroupSpec:\n        template:\n          spec:\n"
        "            containers:\n            - {name: ray-head, image: vllm/vllm-openai:v0.11.0}\n"
    )  # made up for the test, in the shapes of AIBrix's CRDs
    docs = load_text(text, "aibrix.yaml").documents
    assert [(w.kind, w.path) for w in find_workloads(docs)] == [
        ("PodSet", "spec.template.spec"),
        ("RayClusterReplicaSet", "spec.template.spec.headGroupSpec.template.spec"),
    ]
    settings = _settings()
    for doc in docs:
        obj = json.loads(json.dumps(doc.data))
        assert skip_reason(parse_review(json.dumps(_review(obj))), settings) is None
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "ps-0"},
        "spec": docs[0].data["spec"]["template"]["spec"],
    }
    cluster = {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "rs-x"}, "spec": {}}
    for child, owner in ((pod, "PodSet"), (cluster, "RayClusterReplicaSet")):
        r = parse_review(
            json.dumps(_review(_owned(child, "orchestration.aibrix.ai/v1alpha1", owner), CONTROLLER))
        )
        assert skip_reason(r, settings) is not None, owner


DYNAMO_FIXTURES = [
    ROOT / "fixtures" / "collected" / "ai-dynamo__dynamo__examples__backends__vllm__deploy__disagg_kvbm_tp2.yaml",
    ROOT / "fixtures" / "collected" / "ai-dynamo__dynamo__examples__backends__vllm__deploy__v1beta1__agg_snapshot_tp8.yaml",
]  # fmt: skip


def _dcds(dgd: dict[str, Any]) -> list[dict[str, Any]]:
    """The DynamoComponentDeployments a DynamoGraphDeployment's controller creates: one per service
    (v1alpha1 ``spec.services``) or component (v1beta1 ``spec.components``), whose ``spec`` is that service's
    or component's (ai-dynamo/dynamo deploy/operator/internal/dynamo ``GenerateDynamoComponentsDeployments``;
    ``DynamoComponentDeploymentSharedSpec``, shared by both kinds)."""
    api = dgd["apiVersion"]
    spec = dgd["spec"]
    items = (
        [(c["name"], c) for c in spec["components"]]
        if "components" in spec
        else [(name, {**svc, "serviceName": name}) for name, svc in spec["services"].items()]
    )
    return [
        {"apiVersion": api, "kind": "DynamoComponentDeployment", "metadata": {"name": f"x-{name.lower()}"},
         "spec": body}
        for name, body in items
    ]  # fmt: skip


def test_a_dynamo_component_deployment_is_read_as_the_graph_it_comes_from() -> None:
    """A DynamoComponentDeployment (reviewed now: the DynamoGraphDeployment's controller creates one per
    component, and one can be applied on its own) is read as its DynamoGraphDeployment's service or component
    is: for NVIDIA's two example graphs (v1alpha1 and v1beta1), the DCDs made of each give the same containers
    (engine command, resources, the operator's /dev/shm) and the same findings. The v1alpha1 DCD was read as
    nothing (its ``extraPodSpec.mainContainer`` is no PodSpec)."""
    from kvlint.pipeline import run_documents
    from kvlint.workloads import find_workloads

    def pods(ws: list[Any]) -> list[Any]:
        return sorted(json.dumps(w.pod_spec, sort_keys=True) for w in ws)

    def findings(text: str) -> list[tuple[str, str, str]]:
        res = run_documents(load_text(text, "dcd.yaml"), webhook_options())
        return sorted((d.rule, d.severity, d.message) for d in res.diagnostics)

    for path in DYNAMO_FIXTURES:
        (dgd,) = [
            d for d in load_text(path.read_bytes(), str(path)).documents if d.kind == "DynamoGraphDeployment"
        ]
        data = json.loads(json.dumps(dgd.data))
        dcds = _dcds(data)
        text = "\n---\n".join(json.dumps(d) for d in dcds)
        graph_ws = find_workloads([dgd])
        dcd_ws = find_workloads(load_text(text, "dcd.yaml").documents)
        assert len(dcd_ws) == len(dcds) == len(graph_ws) >= 1, path.name
        assert pods(dcd_ws) == pods(graph_ws), path.name
        assert any("/dev/shm" in p for p in pods(dcd_ws)), path.name
        assert findings(text) == findings(json.dumps(data)), path.name
        for obj in dcds:
            assert skip_reason(parse_review(json.dumps(_review(obj))), _settings()) is None


def test_operator_kinds_sent_with_the_gpu_condition_hold_their_pod_spec_where_the_chart_tests_it() -> None:
    """A kind sent through a built-in kinds' webhook (``pod_path``: Knative's Service, Configuration and
    Revision) is tested by that webhook's GPU condition at ``object.<pod_path>``: kvlint check reads the
    kind's one pod spec at that path, and the kind goes to that webhook. Knative Services were sent whatever
    they ran (most are not LLM servers, and each CREATE and UPDATE waited for kvlint)."""
    from kvlint.workloads import find_workloads

    tmpl = {"spec": {"containers": [{"name": "c", "image": "vllm/vllm-openai:v0.11.0"}]}}
    bodies = {("spec", "template", "spec"): {"template": tmpl}, ("spec",): tmpl["spec"]}
    shaped = [k for k in WORKLOAD_KINDS if k.pod_path]
    assert {(k.group, k.kind) for k in shaped} >= {
        ("serving.knative.dev", "Service"),
        ("serving.knative.dev", "Revision"),
    }
    for k in shaped:
        assert k.operator != "Kubernetes" and k.reviewed
        assert chart_shape(k) == CHART_SHAPES[k.pod_path]
        obj = {
            "apiVersion": f"{k.group}/v1",
            "kind": k.kind,
            "metadata": {"name": "x"},
            "spec": bodies[k.pod_path],
        }
        ws = find_workloads(load_text(json.dumps(obj), "x.json").documents)
        assert [w.path for w in ws] == [".".join(k.pod_path)], k.kind


RBG_FIXTURES = sorted((ROOT / "fixtures" / "collected").glob("sgl-project__rbg__*.yaml"))


def test_a_role_based_group_set_is_read_as_the_group_it_creates() -> None:
    """A RoleBasedGroupSet (reviewed now: its controller creates RoleBasedGroups from ``spec.groupTemplate``,
    so those are exempt) is read as the RoleBasedGroup it creates: for each of RBG's example groups, the set
    holding its spec gives the same pods (role templates, patches, the group-size variable) and findings."""
    from kvlint.pipeline import run_documents
    from kvlint.workloads import find_workloads

    def pods(ws: list[Any]) -> list[Any]:
        return sorted(json.dumps(w.pod_spec, sort_keys=True) for w in ws)

    def findings(text: str) -> list[tuple[str, str, str]]:
        res = run_documents(load_text(text, "x.yaml"), webhook_options())
        return sorted((d.rule, d.severity, d.message) for d in res.diagnostics)

    assert len(RBG_FIXTURES) >= 3
    for path in RBG_FIXTURES:
        for rbg in [
            d for d in load_text(path.read_bytes(), str(path)).documents if d.kind == "RoleBasedGroup"
        ]:
            data = json.loads(json.dumps(rbg.data))
            rbgset = {
                "apiVersion": data["apiVersion"],
                "kind": "RoleBasedGroupSet",
                "metadata": {"name": data["metadata"]["name"]},
                "spec": {"replicas": 1, "groupTemplate": {"spec": data["spec"]}},
            }
            set_ws = find_workloads(load_text(json.dumps(rbgset), "set.json").documents)
            group_ws = find_workloads([rbg])
            assert len(set_ws) == len(group_ws) >= 1, path.name
            assert pods(set_ws) == pods(group_ws), path.name
            assert all(w.path.startswith("spec.groupTemplate.spec.roles[") for w in set_ws)
            assert findings(json.dumps(rbgset)) == findings(json.dumps(data)), path.name
            assert skip_reason(parse_review(json.dumps(_review(rbgset))), _settings()) is None


NIM_FIXTURE = (
    ROOT
    / "fixtures"
    / "collected"
    / "awslabs__ai-on-eks__blueprints__inference__gpu__nvidia-nim-operator-llama3-8b__nim-service-llama3-8b-instruct.yaml"
)


def test_a_nim_pipeline_is_read_as_the_nim_services_it_creates_and_they_are_exempt() -> None:
    """A NIMPipeline (apps.nvidia.com) holds NIMService specs (``spec.services[].spec``) and its controller
    creates those NIMServices with the pipeline as controlling owner: the pipeline is reviewed and read as the
    services (the same pods and findings as the published NIMService, a disabled one left out), and a NIMService
    the pipeline controls is exempt (it was reviewed instead, and the pipeline was not sent). The operator
    creates only the services whose ``enabled`` is true (k8s-nim-operator internal/controller
    nimpipeline_controller.go ``reconcileNIMPipeline``; the CRD has no default): one that leaves it out is not
    read either (it was, and its findings could deny a pipeline for a service that never runs)."""
    from kvlint.pipeline import run_documents
    from kvlint.workloads import find_workloads

    (svc,) = [
        d for d in load_text(NIM_FIXTURE.read_bytes(), str(NIM_FIXTURE)).documents if d.kind == "NIMService"
    ]
    data = json.loads(json.dumps(svc.data))
    pipeline = {
        "apiVersion": "apps.nvidia.com/v1alpha1",
        "kind": "NIMPipeline",
        "metadata": {"name": "pipeline"},
        "spec": {
            "services": [
                {"name": data["metadata"]["name"], "enabled": True, "spec": data["spec"]},
                {"name": "off", "enabled": False, "spec": data["spec"]},
                {"name": "unset", "spec": data["spec"]},
            ]
        },
    }  # the shape of k8s-nim-operator's NIMPipeline (made up around the published NIMService)
    ws = find_workloads(load_text(json.dumps(pipeline), "p.json").documents)
    (one,) = find_workloads([svc])
    assert [w.path for w in ws] == ["spec.services[0].spec"]
    assert json.dumps(ws[0].pod_spec, sort_keys=True) == json.dumps(one.pod_spec, sort_keys=True)

    def findings(obj: dict[str, Any]) -> list[tuple[str, str]]:
        res = run_documents(load_text(json.dumps(obj), "x.json"), webhook_options())
        return sorted((d.rule, d.message) for d in res.diagnostics)

    assert findings(pipeline) == findings(data) != []
    settings = _settings()
    assert skip_reason(parse_review(json.dumps(_review(pipeline))), settings) is None
    owned = _owned(data, "apps.nvidia.com/v1alpha1", "NIMPipeline")
    assert skip_reason(parse_review(json.dumps(_review(owned, CONTROLLER))), settings) is not None


def test_a_rolebasedgroup_with_scalar_role_templates_does_not_stop_the_run() -> None:
    """``spec.roleTemplates: 3`` (a shape the API server refuses) and a templateRef name that is a list raised TypeError from the workload finder,
    which runs outside the per-workload guard: the whole ``kvlint check`` ended in a traceback. The group's
    roles are read without templates and the next document is still checked."""
    from kvlint.load import load_text
    from kvlint.pipeline import Options, run_documents

    text = (
        "apiVersion: workloads.x-k8s.io/v1alpha2\nkind: RoleBasedGroup\nmetadata: {name: g}\nspec:\n"
        "  roleTemplates: 3\n  roles:\n  - name: a\n    replicas: 1\n    standalonePattern:\n"
        "      templateRef: {name: [x]}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: other}\n"
        "spec:\n  template:\n    spec:\n      containers:\n"
        "      - {name: c, image: 'vllm/vllm-openai:v0.8.5', args: [--model, facebook/opt-125m]}\n"
    )
    result = run_documents(load_text(text, "rbg.yaml"), Options(allow_hub=False))
    assert "Deployment/other" in {d.object for d in result.diagnostics}
