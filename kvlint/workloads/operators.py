"""More operator kinds: NVIDIA Dynamo ``DynamoGraphDeployment``, Amazon SageMaker HyperPod
``InferenceEndpointConfig``, and the kinds whose engine settings live where kvlint does not read (llmaz
``Playground``, KAITO ``MultiRoleInference``, Ray Serve applications), which get a finding saying so.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import Any

from kvlint.gpu_resources import NVIDIA_GPU
from kvlint.k8s_quantity import K8S_QUANTITY
from kvlint.source import LDict, LList, Loc, loc_of
from kvlint.types import ENGINE_NAMES, Document, Finding, Mark, Workload
from kvlint.wording import shell_word
from kvlint.workloads.base import get_in, int_or_none, ldict, llist, located_copy, synthetic_workload
from kvlint.workloads.merge import strategic_merge

__all__ = [
    "GITOPS_KINDS",
    "dynamo_component_deployment_workloads",
    "embedded_container_note",
    "dynamo_component_pods",
    "dynamo_workloads",
    "hyperpod_workloads",
    "is_gitops",
    "unknown_kind_note",
    "unread_kind_note",
]

#: Dynamo ``resources`` keys -> Kubernetes resource names (``gpu`` is the NVIDIA device plugin's GPU).
_DYNAMO_RESOURCES = {"cpu": "cpu", "memory": "memory", "gpu": NVIDIA_GPU}


def _dynamo_resources(res: Any) -> LDict | None:
    """A Dynamo service's ``resources`` (``requests``/``limits`` of ``cpu``, ``memory``, ``gpu``) as a
    container's ``resources`` (kvlint reads ``gpu`` as ``nvidia.com/gpu``)."""
    if not isinstance(res, dict):
        return None
    out = LDict(loc=loc_of(res))
    for section in ("requests", "limits"):
        block = res.get(section)
        if not isinstance(block, dict):
            continue
        items = [
            (_DYNAMO_RESOURCES[k], v, loc_of(block, k))
            for k, v in block.items()
            if k in _DYNAMO_RESOURCES and v is not None
        ]
        custom = block.get("custom")
        if isinstance(custom, dict):
            items += [(str(k), v, loc_of(custom, k)) for k, v in custom.items()]
        out[section] = ldict(loc_of(res, section), items)
        out.locs[section] = loc_of(res, section)  # type: ignore[assignment]
    return out


#: What the Dynamo operator mounts at ``/dev/shm`` of a component's main container unless its shared-memory
#: setting disables it: a memory-backed emptyDir named ``shared-memory``, default 8Gi (ai-dynamo/dynamo,
#: deploy/operator: ``buildSharedMemoryVolumeAndMount``, ``consts.DefaultSharedMemorySize``). The setting is
#: spelled differently in the two API versions: v1alpha1 ``sharedMemory: {disabled, size}`` (a zero or absent
#: size is the default), v1beta1 ``sharedMemorySize``, a quantity (absent: the default; zero: no volume;
#: ``api/v1beta1/dynamocomponentdeployment_types.go``@006b6e10 ``SharedMemorySize``, and the v1alpha1 conversion
#: ``api/v1alpha1/shared_spec_conversion.go`` maps ``disabled`` to ``"0"`` and a zero size to absent).
DYNAMO_SHM_VOLUME = "shared-memory"
DYNAMO_SHM_SIZE = "8Gi"


def _zero_quantity(value: Any) -> bool:
    """Whether ``value`` is a quantity equal to zero (``0``, ``"0"``, ``"0Gi"``, ``"0.0"``), as
    ``resource.Quantity.IsZero``/``Sign() == 0`` read it; False for anything else, unreadable text included."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return value == 0
    if not isinstance(value, str):
        return False
    # the number a quantity starts with, its exponent included and its suffix left out: enough to tell zero
    m = K8S_QUANTITY.match(value.lstrip())
    if m is None:
        return False
    sign, number, _, exponent, _ = m.groups()
    try:
        return float(sign + number + (f"e{exponent}" if exponent is not None else "")) == 0
    except ValueError:  # pragma: no cover - the pattern admits only numbers
        return False


def _operator_shm_size(svc: LDict, beta: bool) -> tuple[Any, str] | None:
    """``(size, key)``: the size of the ``/dev/shm`` volume the Dynamo operator adds for component ``svc`` and
    the key of ``svc`` that sets it (see :data:`DYNAMO_SHM_VOLUME`), or None when the component disables it.
    ``beta``: the v1beta1 form (``sharedMemorySize``), else v1alpha1 (``sharedMemory``)."""
    if beta:
        size = svc.get("sharedMemorySize")
        if size is None:
            return DYNAMO_SHM_SIZE, "sharedMemorySize"
        return None if _zero_quantity(size) else (size, "sharedMemorySize")
    shm = svc.get("sharedMemory")
    if not isinstance(shm, dict):
        return DYNAMO_SHM_SIZE, "sharedMemory"
    if shm.get("disabled") is True:
        return None
    size = shm.get("size")
    return (DYNAMO_SHM_SIZE if size is None or _zero_quantity(size) else size), "sharedMemory"


def _with_operator_shm(svc: LDict, pod: LDict, container: LDict, *, beta: bool = False) -> None:
    """Add to ``pod`` and its main ``container`` the ``/dev/shm`` volume the Dynamo operator adds (see
    :data:`DYNAMO_SHM_VOLUME`, :func:`_operator_shm_size`; ``beta`` for a v1beta1 component), located at the
    component's shared-memory setting (or the component); nothing when the component disables it, the
    container already mounts something at ``/dev/shm``, or the pod already has a volume of that name (the
    operator's would clash: what it does then is not modelled)."""
    setting = _operator_shm_size(svc, beta)
    if setting is None:
        return
    size, key = setting
    mounts = container.get("volumeMounts")
    mounts = mounts if isinstance(mounts, list) else []
    if any(isinstance(m, dict) and str(m.get("mountPath", "")).rstrip("/") == "/dev/shm" for m in mounts):
        return
    volumes = pod.get("volumes")
    volumes = volumes if isinstance(volumes, list) else []
    if any(isinstance(v, dict) and v.get("name") == DYNAMO_SHM_VOLUME for v in volumes):
        return
    loc = loc_of(svc, key) or loc_of(svc)
    empty_dir = ldict(loc, [("medium", "Memory", loc), ("sizeLimit", size, loc)])
    volume = ldict(loc, [("name", DYNAMO_SHM_VOLUME, loc), ("emptyDir", empty_dir, loc)])
    mount = ldict(loc, [("name", DYNAMO_SHM_VOLUME, loc), ("mountPath", "/dev/shm", loc)])

    def located(items: list[Any], owner: Any) -> list[tuple[Any, Loc | None]]:
        locs = owner.locs if isinstance(owner, LList) else []
        return [(v, locs[i] if i < len(locs) else None) for i, v in enumerate(items)]

    pod["volumes"] = llist(
        loc_of(pod, "volumes") or loc, [*located(volumes, pod.get("volumes")), (volume, loc)]
    )
    container["volumeMounts"] = llist(
        loc_of(container, "volumeMounts") or loc,
        [*located(mounts, container.get("volumeMounts")), (mount, loc)],
    )


_COMPONENT_PATH = re.compile(r"spec\.components\[(\d+)\]\.podTemplate\.spec")


#: The command and args the Dynamo operator gives a ``frontend`` component's main container when the manifest
#: sets neither (ai-dynamo/dynamo, deploy/operator/internal/dynamo/component_frontend.go,
#: ``FrontendDefaults.GetBaseContainer``): the HTTP frontend, which loads no model.
DYNAMO_FRONTEND_COMMAND = ("python3",)
DYNAMO_FRONTEND_ARGS = ("-m", "dynamo.frontend")


def _with_frontend_command(component_type: Any, container: LDict, loc: Loc | None) -> None:
    """Give a ``frontend`` component's main container the operator's default command (see
    :data:`DYNAMO_FRONTEND_COMMAND`) when it sets neither ``command`` nor ``args``, located at the
    component's type."""
    if component_type != "frontend" or container.get("command") or container.get("args"):
        return
    container["command"] = llist(loc, [(v, loc) for v in DYNAMO_FRONTEND_COMMAND])
    container["args"] = llist(loc, [(v, loc) for v in DYNAMO_FRONTEND_ARGS])
    if loc is not None:
        container.locs["command"] = container.locs["args"] = loc


def _spanning_nodes(w: Workload, svc: LDict) -> Workload:
    """``w`` with ``group_size`` the nodes a Dynamo service or component spans, ``multinode.nodeCount`` when it
    is more than 1: its GPU limit is per node and its engine's tensor x pipeline parallel size the GPUs of all
    of them, the operator starting the other nodes' workers for the leader's engine (ai-dynamo/dynamo
    docs/kubernetes/deployment/multinode-deployment.md@055373f2, "GPU Distribution": "Total GPUs:
    multinode.nodeCount x gpu", and the tensor parallel size "must equal multinode.nodeCount x gpu"; for vLLM
    the leader runs ``ray start --head`` then the engine with ``--distributed-executor-backend ray``, the other
    nodes ``ray start --address``). Without it a documented multi-node worker (TP 16 on two 8-GPU nodes) was
    KV403's error, which the webhook denied."""
    nodes = int_or_none(get_in(svc, "multinode", "nodeCount"))
    return replace(w, group_size=nodes) if nodes is not None and nodes > 1 and w.group_size is None else w


def dynamo_component_pods(doc: Document, found: list[Workload]) -> list[Workload]:
    """The pods of a ``DynamoGraphDeployment`` in the ``spec.components`` form (nvidia.com/v1beta1, each
    component a ``podTemplate``, found as plain pod templates), or of a ``DynamoComponentDeployment`` whose
    ``spec`` is one such component (``spec.podTemplate``), as the operator writes them: the ``/dev/shm`` it
    adds to each component's main container (the one named ``main``, Dynamo's ``MainContainerName``, else the
    first; see :func:`_with_operator_shm`, the component's ``sharedMemorySize``) and a frontend's default command
    (:func:`_with_frontend_command`, the component's ``type``), and the nodes a ``multinode`` component spans
    (:func:`_spanning_nodes`). The documents are not modified: a workload whose pod changes holds copies of the
    PodSpec and of that container."""
    if doc.kind == "DynamoComponentDeployment":
        spec = get_in(doc.data, "spec")
        components = [spec] if isinstance(spec, LDict) else None
    else:
        components = get_in(doc.data, "spec", "components")
    if not isinstance(components, list):
        return found
    out: list[Workload] = []
    for w in found:
        comp: Any = None
        if doc.kind == "DynamoComponentDeployment":
            comp = components[0] if w.path == "spec.podTemplate.spec" else None
        elif (m := _COMPONENT_PATH.fullmatch(w.path)) is not None and int(m.group(1)) < len(components):
            comp = components[int(m.group(1))]
        containers = w.pod_spec.get("containers")
        if isinstance(comp, LDict):
            w = _spanning_nodes(w, comp)
        if not isinstance(comp, LDict) or not isinstance(containers, LList) or not containers:
            out.append(w)
            continue
        names = [c.get("name") if isinstance(c, dict) else None for c in containers]
        i = names.index("main") if "main" in names else 0
        main = containers[i]
        if not isinstance(main, LDict):
            out.append(w)
            continue
        pod = located_copy(w.pod_spec)
        container = located_copy(main)
        _with_operator_shm(comp, pod, container, beta=True)
        _with_frontend_command(comp.get("type"), container, loc_of(comp, "type"))
        if pod.get("volumes") is w.pod_spec.get("volumes") and container.get("args") is main.get("args"):
            out.append(w)  # nothing added
            continue
        items = list(containers)
        items[i] = container
        pod["containers"] = llist(containers.loc, list(zip(items, containers.locs, strict=False)))
        out.append(replace(w, pod_spec=pod))
    return out


def dynamo_workloads(doc: Document) -> list[Workload]:
    """NVIDIA Dynamo ``DynamoGraphDeployment`` (nvidia.com): one pod per service of ``spec.services``.

    A service's pod is its ``extraPodSpec`` (PodSpec fields) with ``extraPodSpec.mainContainer`` as the
    container, to which the service's own ``resources`` (Dynamo's ``cpu``/``memory``/``gpu``), probes and
    ``envs`` apply when the container does not set them (the DynamoGraphDeployment API: ``services.<name>``
    ``resources``, ``livenessProbe``, ``readinessProbe``, ``envs``, ``extraPodSpec``, ``replicas``). The
    frontend and planner services run no engine; the workers run ``python3 -m dynamo.vllm|sglang``
    (:func:`kvlint.engines.command.parse_container`). The operator mounts a memory-backed ``/dev/shm`` in
    the main container (:func:`_with_operator_shm`): the pod holds it as the operator writes it."""
    services = get_in(doc.data, "spec", "services")
    if not isinstance(services, dict):
        return []
    return [
        _service_workload(doc, str(name), svc, f"spec.services.{name}")
        for name, svc in services.items()
        if isinstance(svc, LDict)
    ]


def dynamo_component_deployment_workloads(doc: Document) -> list[Workload]:
    """NVIDIA Dynamo ``DynamoComponentDeployment`` (nvidia.com) in the v1alpha1 form: its ``spec`` is one
    service of a ``DynamoGraphDeployment``'s ``spec.services`` (``DynamoComponentDeploymentSharedSpec``, which
    the DynamoGraphDeployment controller copies into the DynamoComponentDeployment it creates per service,
    ai-dynamo/dynamo deploy/operator/internal/dynamo ``GenerateDynamoComponentsDeployments``; one can also be
    applied on its own), read as :func:`dynamo_workloads` reads a service; the container is named after
    ``spec.serviceName``, else the object. Empty for the v1beta1 form (``spec.podTemplate``, a pod template
    :func:`dynamo_component_pods` completes) and for a spec that is not a mapping."""
    spec = get_in(doc.data, "spec")
    if not isinstance(spec, LDict) or "podTemplate" in spec:
        return []
    name = spec.get("serviceName")
    return [_service_workload(doc, name if isinstance(name, str) and name else doc.name, spec, "spec")]


def _service_workload(doc: Document, name: str, svc: LDict, path: str) -> Workload:
    """One Dynamo service (a ``spec.services`` entry, or a DynamoComponentDeployment's ``spec``) as the pod
    the operator creates for it (see :func:`dynamo_workloads`), at ``path``."""
    extra = svc.get("extraPodSpec")
    extra = extra if isinstance(extra, LDict) else LDict(loc=loc_of(svc))
    main = extra.get("mainContainer")
    container = located_copy(main) if isinstance(main, LDict) else LDict(loc=loc_of(svc))
    container.setdefault("name", str(name))
    res = _dynamo_resources(svc.get("resources"))
    if res is not None and "resources" not in container:
        container["resources"] = res
        container.locs["resources"] = loc_of(svc, "resources")  # type: ignore[assignment]
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        if probe not in container and isinstance(svc.get(probe), dict):
            container[probe] = svc[probe]
            container.locs[probe] = loc_of(svc, probe)  # type: ignore[assignment]
    envs = svc.get("envs")
    if isinstance(envs, list) and envs:
        container["env"] = strategic_merge(LList(envs, loc=loc_of(envs)), container.get("env") or [], "env")
    ps = LDict(loc=extra.loc or loc_of(svc))
    for k, v in extra.items():
        if k == "mainContainer":
            continue
        ps[k] = v
        if k in extra.locs:
            ps.locs[k] = extra.locs[k]
    _with_operator_shm(svc, ps, container)
    _with_frontend_command(svc.get("componentType"), container, loc_of(svc, "componentType"))
    others = extra.get("containers")
    ps["containers"] = llist(
        container.loc,
        [(container, container.loc), *((c, None) for c in (others if isinstance(others, list) else []))],
    )
    return _spanning_nodes(synthetic_workload(doc, ps, path, replicas=int_or_none(svc.get("replicas"))), svc)


def hyperpod_workloads(doc: Document) -> list[Workload]:
    """Amazon SageMaker HyperPod ``InferenceEndpointConfig`` (inference.sagemaker.aws.amazon.com): the model
    server pod, from ``spec.worker`` (``image``, ``args``, ``resources``, ``environmentVariables``,
    ``modelInvocationPort``) and ``spec.instanceType`` (an ``ml.*`` instance type, as the
    ``node.kubernetes.io/instance-type`` label of HyperPod nodes); the model of a Hugging Face
    ``modelSourceConfig`` is its ``derived_model`` (a ``kvlint.io/model`` annotation wins)."""
    spec = get_in(doc.data, "spec")
    worker = get_in(spec, "worker")
    if not isinstance(spec, LDict) or not isinstance(worker, LDict) or not worker.get("image"):
        return []
    wloc = loc_of(spec, "worker")
    items: list[tuple[str, Any, Loc | None]] = [("name", "worker", wloc)]
    for key in ("image", "args", "command", "resources"):
        if worker.get(key) is not None:
            items.append((key, worker[key], loc_of(worker, key)))
    env = worker.get("environmentVariables")
    if isinstance(env, list):
        items.append(("env", env, loc_of(worker, "environmentVariables")))
    port = get_in(worker, "modelInvocationPort", "containerPort")
    if isinstance(port, int):
        ploc = loc_of(get_in(worker, "modelInvocationPort"), "containerPort")
        items.append(("ports", llist(ploc, [(ldict(ploc, [("containerPort", port, ploc)]), ploc)]), ploc))
    container = ldict(wloc, items)
    pod: list[tuple[str, Any, Loc | None]] = [("containers", llist(wloc, [(container, wloc)]), wloc)]
    it = spec.get("instanceType")
    if isinstance(it, str) and it:
        iloc = loc_of(spec, "instanceType")
        pod.append(("nodeSelector", ldict(iloc, [("node.kubernetes.io/instance-type", it, iloc)]), iloc))
    ps = ldict(loc_of(spec) or doc.loc, pod)
    hf = get_in(spec, "modelSourceConfig", "huggingFaceModel", "modelId")
    return [
        synthetic_workload(
            doc,
            ps,
            "spec.worker",
            replicas=int_or_none(spec.get("replicas")),
            derived_model=hf if isinstance(hf, str) and hf else None,
        )
    ]


#: Kinds that serve an LLM through settings kvlint does not read, and where those settings are.
_UNREAD = {
    "Playground": "the engine command comes from the llmaz BackendRuntime named in "
    "spec.backendRuntimeConfig (installed with llmaz, not among the inputs), filled with the OpenModel's model; "
    "kvlint restates the vllm, sglang and tgi BackendRuntimes of llmaz's chart (default config) when the "
    "OpenModel its modelClaim names is among the inputs",
    "Service": "the engine command comes from the llmaz BackendRuntime installed with llmaz",
    "MultiRoleInference": "KAITO builds its prefill and decode pods from its presets inside the KAITO release",
    "RayService": "the engine is configured by the Python code of the Ray Serve application in serveConfigV2 "
    "(its import_path), which kvlint does not read (it reads Ray Serve LLM's llm_configs)",
    "RayJob": "the engine is configured by the Ray job's Python entrypoint, which kvlint does not read",
    # the ModelBoosters kvlint.workloads.kthena.model_booster_workloads does not read (volcano-sh/kthena@3cc05728
    # pkg/model-booster-controller/convert/model_serving.go BuildModelServing: vLLM, vLLMDisaggregated only)
    "ModelBooster": "kvlint reads a spec.backend of type vLLM or vLLMDisaggregated whose server worker runs one "
    "pod, and this one is not; Kthena's model-booster controller generates a ModelServing from it, which kvlint "
    "reads: kubectl get modelserving -o yaml | kvlint check -",
}
#: The API group of a kind of :data:`_UNREAD` whose name other groups use too (llmaz's ``Service`` is matched on
#: ``llmaz`` in its apiVersion, below)
_UNREAD_GROUPS = {"ModelBooster": "workload.serving.volcano.sh/"}


#: GitOps objects that deploy a Helm chart or a directory of manifests kvlint does not fetch or render: kind ->
#: the API groups (``apiVersion`` prefixes) of that kind. Argo CD ``Application``/``ApplicationSet``
#: (argoproj.io, ``spec.source``/``spec.sources``; an ApplicationSet under ``spec.template``) and Flux
#: ``HelmRelease`` (helm.toolkit.fluxcd.io, and the older Helm Operator's helm.fluxcd.io).
GITOPS_KINDS: dict[str, tuple[str, ...]] = {
    "Application": ("argoproj.io/",),
    "ApplicationSet": ("argoproj.io/",),
    "HelmRelease": ("helm.toolkit.fluxcd.io/", "helm.fluxcd.io/"),
}


def is_gitops(doc: Document) -> bool:
    """The object is one of :data:`GITOPS_KINDS` (kind and API group both)."""
    groups = GITOPS_KINDS.get(doc.kind)
    return groups is not None and str(get_in(doc.data, "apiVersion") or "").startswith(groups)


def _text(v: Any) -> str | None:
    return str(v) if isinstance(v, (str, int, float)) and str(v) else None


def _argo_source(src: Any) -> tuple[str, Loc | None] | None:
    """What one Argo CD ``ApplicationSource`` deploys, in words, and where it is written."""
    if not isinstance(src, dict):
        return None
    if src.get("ref") and not (src.get("chart") or src.get("path")):
        return None  # a source that only lends its files to the others ($ref value files)
    repo = _text(src.get("repoURL")) or "its repository"
    rev = _text(src.get("targetRevision"))
    chart, path = _text(src.get("chart")), _text(src.get("path"))
    if chart:
        what = f"the Helm chart {chart}{' ' + rev if rev else ''} of {repo}"
    elif path:
        what = f"the directory {path} of {repo}{' at ' + rev if rev else ''}"
    else:
        what = f"{repo}{' at ' + rev if rev else ''}"
    helm = src.get("helm")
    if isinstance(helm, dict) and any(helm.get(k) for k in ("values", "valuesObject", "parameters")):
        what += " with the Helm values and parameters written here"
    elif isinstance(helm, dict) and isinstance(helm.get("valueFiles"), list) and helm["valueFiles"]:
        what += " with the value files " + ", ".join(str(f) for f in helm["valueFiles"])
    return what, loc_of(src)


#: The most directories an Argo CD object's fix names (:func:`_checkout_dirs`). [assumed] an Application has
#: a few sources.
_MAX_FIX_DIRS = 8


def _checkout_dirs(doc: Document) -> list[str]:
    """The directories of manifests an Argo CD Application (or ApplicationSet template) deploys that are
    directories of the checkout holding its own file: each source's ``path`` (a source without ``chart``) joined
    to the repository root above the file (:func:`kvlint.workloads.gitops_local.repository_root`), an existing
    directory reached without a link or ``..`` (:func:`kvlint.workloads.gitops_local.contained`) that holds no
    ``Chart.yaml`` (a chart of the checkout is rendered with its values instead). As Argo CD's repo server reads
    it: a ``path`` is relative to the repository root (argo-cd ``reposerver/repository/repository.go``, the
    application path joined to the checkout). Shown relative to the current directory when below it, else as the
    absolute path; none when the object is not Argo CD's, is read from standard input or lies outside any
    checkout."""
    if doc.kind not in ("Application", "ApplicationSet"):
        return []
    from kvlint.workloads.gitops_local import contained, repository_root

    root = repository_root(doc.path)  # never raises (kvlint.load.directories_to_repository_root)
    if root is None:
        return []
    spec = get_in(doc.data, "spec")
    if doc.kind == "ApplicationSet":
        spec = get_in(spec, "template", "spec")
    sources = get_in(spec, "sources")
    out: list[str] = []
    for src in sources if isinstance(sources, list) else [get_in(spec, "source")]:
        if not isinstance(src, dict) or src.get("chart") or not isinstance(src.get("path"), str):
            continue
        found, _why = contained(root, src["path"])
        if found is None or not os.path.isdir(found) or os.path.isfile(os.path.join(found, "Chart.yaml")):
            continue
        rel = os.path.relpath(found)
        shown = found if rel.startswith("..") else rel
        if shown not in out:
            out.append(shown)
        if len(out) >= _MAX_FIX_DIRS:
            break
    return out


def _gitops_why(doc: Document) -> tuple[str, Loc | None]:
    """Where the pods of a GitOps object (:data:`GITOPS_KINDS`) come from, and the place that says it."""
    spec = get_in(doc.data, "spec")
    if doc.kind == "HelmRelease":
        chart = get_in(spec, "chart", "spec")
        ref = get_in(spec, "chartRef")
        if isinstance(chart, dict):
            name = _text(chart.get("chart")) or "its chart"
            version = _text(chart.get("version"))
            src = chart.get("sourceRef")
            origin = (
                f" from {src.get('kind', 'source')}/{src.get('name', '?')}" if isinstance(src, dict) else ""
            )
            what = f"the chart {name}{' ' + version if version else ''}{origin}"
            where = loc_of(get_in(spec, "chart"), "spec") or loc_of(spec, "chart")
        elif isinstance(ref, dict):
            what = f"the chart of {ref.get('kind', 'source')}/{ref.get('name', '?')}"
            where = loc_of(spec, "chartRef")
        else:
            what, where = "its chart", None
        values = " with spec.values" if isinstance(spec, dict) and spec.get("values") else ""
        return (
            f"Flux's helm-controller renders its pods from {what}{values}; kvlint neither fetches nor renders it",
            where,
        )
    if doc.kind == "ApplicationSet":
        spec = get_in(spec, "template", "spec")
    sources = get_in(spec, "sources")
    described = [
        d
        for d in (
            _argo_source(s) for s in (sources if isinstance(sources, list) else [get_in(spec, "source")])
        )
        if d
    ]
    if not described:
        return "Argo CD builds its pods from the source it names; kvlint neither fetches nor renders it", None
    what = "; ".join(d[0] for d in described)
    return f"Argo CD builds its pods from {what}; kvlint neither fetches nor renders it", described[0][1]


#: An engine's name as a key of an operator object's spec (``vllmArgs``, ``sglang``, ``tgiConfig``) or as the value
#: of a key that names the engine (``engine: vllm``); searched in lower case.
_ENGINE_KEY = re.compile(r"vllm|sglang|text[-_]?generation[-_]?inference")
#: ``tgi`` only as a whole word at the start of a key as written (``tgi``, ``tgiConfig``, ``tgi_args``)
_TGI_KEY = re.compile(r"(?i:tgi)(?![a-z])")
_ENGINE_VALUE = re.compile(r"^(vllm|sglang|tgi|text-generation-inference)$")
_ENGINE_CHOOSERS = frozenset(
    {"engine", "backend", "inferenceengine", "servingengine", "enginetype", "framework"}
)


def _engine_name(word: str) -> str:
    """The engine a chooser's value names (``vllm``, ``sglang``, else TGI's words), as messages name it."""
    return ENGINE_NAMES["vllm" if "vllm" in word else "sglang" if "sglang" in word else "tgi"]


def _engine_named_at(node: Any, path: str, depth: int = 0) -> tuple[str, str, Loc | None] | None:
    """``(engine, dotted path, location)`` of the first key of ``node`` that names a serving engine, or of
    an engine chooser key (``engine``, ``backend``...) whose value is one; None when there is none."""
    if depth > 64:
        return None
    if isinstance(node, dict):
        for k, v in node.items():
            key = str(k)
            low = key.lower()
            hit = _ENGINE_KEY.search(low) or _TGI_KEY.match(key)
            if hit is None and low in _ENGINE_CHOOSERS and isinstance(v, str):
                hit = _ENGINE_VALUE.match(v.strip().lower())
            if hit is not None:
                return (
                    _engine_name(hit.group(0).lower()),
                    f"{path}.{key}",
                    loc_of(node, k),
                )
            found = _engine_named_at(v, f"{path}.{key}", depth + 1)
            if found is not None:
                return found
    elif isinstance(node, list):
        for i, x in enumerate(node):
            found = _engine_named_at(x, f"{path}[{i}]", depth + 1)
            if found is not None:
                return found
    return None


#: Kinds kvlint's readers take by name in any API group (``("", kind)`` of ``known``) that are those of one
#: operator: the API groups it serves them in. An object of the kind in another group is another operator's and
#: counts as unknown below: LLMKube's ``inference.llmkube.dev`` ``InferenceService`` (``spec.runtime: vllm``,
#: ``spec.vllmConfig``), which the KServe reader finds no predictor in, was silently skipped. KServe's groups
#: (``serving.kserve.io``, v1alpha2's ``serving.kubeflow.org``) and OME's (``ome.io``, read as KServe's shape).
_KIND_GROUPS: dict[str, tuple[str, ...]] = {
    "InferenceService": ("serving.kserve.io", "serving.kubeflow.org", "ome.io"),
}


def unknown_kind_note(doc: Document, known: frozenset[tuple[str, str]]) -> Finding | None:
    """A finding for an object of an operator kind kvlint has no reader for (an API group with a dot, not one of
    ``known`` ``(group, kind)``, nor ``("", kind)`` for a kind known in any group) that holds no pod template kvlint could read, when its ``spec`` names a serving
    engine in a key (``serving.vllmArgs``) or as the value of an engine chooser (``engine: vllm``): its operator
    builds the pods from settings kvlint does not read. None otherwise (most objects: labels, selectors and
    names that mention an engine are values of other keys and say nothing here)."""
    api = get_in(doc.data, "apiVersion")
    group = api.split("/", 1)[0] if isinstance(api, str) and "/" in api else ""
    by_kind = ("", doc.kind) in known and group in _KIND_GROUPS.get(doc.kind, (group,))
    if "." not in group or (group, doc.kind) in known or by_kind or is_gitops(doc):
        return None
    if doc.kind in _UNREAD:
        return None  # noted by unread_kind_note
    found = _engine_named_at(get_in(doc.data, "spec"), "spec")
    if found is None:
        return None
    engine, path, where = found
    return _operator_note(
        doc,
        f"kvlint has no reader for {doc.kind} ({group}), whose {path} configures {engine}; its operator builds the "
        "pods from them",
        where,
    )


#: A container's ``image:`` line inside a text value (a block of YAML held as a string: a Crossplane
#: function-go-templating ``inline.template``, a manifest kept in a ConfigMap), its value up to a quote, space or
#: comment.
_IMAGE_LINE = re.compile(r"^[ \t]*(?:-[ \t]+)?image:[ \t]*[\"']?([^\"'\s#{}]+)", re.M)
#: How deep :func:`embedded_container_note` looks into a document. [assumed] as the structural walk
_EMBED_DEPTH = 64


def _text_with_engine_image(node: Any, path: str, depth: int = 0) -> tuple[str, str, Loc | None] | None:
    """``(dotted path, image, position)`` of the first multi-line string under ``node`` holding an ``image:``
    line whose image names a serving engine (:func:`kvlint.engines.images.image_mentions_engine`). ``path`` is
    where ``node`` is (empty for the object itself); the path said is ``spec.steps[0].args[0]``, with no leading
    dot whether it ends at a key or at a list item. The path is written only for the string found (perf48: it
    was written for every value walked, and most objects hold no such string: 1.8 M instructions of the ~19 M a
    webhook review of ``bench/webhook.py``'s DisaggregatedSet took, whose images are placeholders; 0.5 M now)."""
    found = _engine_text(node, depth)
    if found is None:
        return None
    steps, image, loc = found
    at = path
    for is_item, key in reversed(steps):
        at = f"{at}[{key}]" if is_item else (f"{at}.{key}" if at else str(key))
    return at, image, loc


def _engine_text(node: Any, depth: int) -> tuple[list[tuple[bool, Any]], str, Loc | None] | None:
    """:func:`_text_with_engine_image` without the path: the steps from the string found up to ``node``
    (``(is a list index, key)``, innermost first), the image and the string's position."""
    if depth > _EMBED_DEPTH:
        return None
    pairs: Any
    if isinstance(node, dict):
        pairs, is_item = node.items(), False
    elif isinstance(node, list):
        pairs, is_item = enumerate(node), True
    else:
        return None
    for key, v in pairs:
        if isinstance(v, str):
            if "\n" in v and "image" in v:
                hit = engine_image_in_text(v)
                if hit is not None:
                    return [(is_item, key)], hit, loc_of(node, key)
        elif isinstance(v, (dict, list)):
            found = _engine_text(v, depth + 1)
            if found is not None:
                found[0].append((is_item, key))
                return found
    return None


def engine_image_in_text(text: str) -> str | None:
    """The first image of an ``image:`` line of ``text`` (a manifest or patch held as a string) that names a
    serving engine (:func:`kvlint.engines.images.image_mentions_engine`), or None. Linear in ``text``."""
    from kvlint.engines.images import image_mentions_engine

    for m in _IMAGE_LINE.finditer(text):
        if image_mentions_engine(m.group(1)):
            return m.group(1)
    return None


def embedded_container_note(doc: Document) -> Finding | None:
    """KV503 (info) for an object that holds a serving container kvlint cannot place: a multi-line text value
    of it (a template another tool renders into manifests: a Crossplane Composition's function-go-templating
    ``inline.template``, a manifest kept in a ConfigMap) has an ``image:`` line naming a serving engine. kvlint
    lints manifests, not templates held as text, so it says the container is not read rather than pass the object
    in silence. None when there is no such text, or for an object without a kind."""
    if not doc.kind or not isinstance(doc.data, dict):
        return None
    found = _text_with_engine_image(doc.data, "")
    if found is None:
        return None
    path, image, at = found
    crossplane = str(doc.data.get("apiVersion") or "").startswith("apiextensions.crossplane.io/")
    how = (
        "crossplane render XR.yaml COMPOSITION.yaml FUNCTIONS.yaml | kvlint check -"
        if crossplane
        else "render it with the tool that reads it and pipe the manifests: ... | kvlint check -"
    )
    return Finding(
        "KV503",
        f"kvlint does not read this {doc.kind}'s engine settings: its serving container is text in {path} (image "
        f"{image}), a template another tool renders into a manifest, and kvlint lints manifests",
        at or doc.loc,
        fix=f"lint what it renders: {how}; or check the engine command with kvlint plan -- <command>",
        severity="info",
        mark=Mark.SETTINGS_NOT_READ,
    )


def unread_kind_note(doc: Document, loc: Loc | None = None) -> Finding | None:
    """A finding for an object of a kind that serves an LLM through settings kvlint does not read, or None:
    the operator kinds of :data:`_UNREAD`, and the GitOps objects of :data:`GITOPS_KINDS`, which deploy a Helm
    chart or manifests that kvlint does not fetch (the caller decides whether the object names an engine)."""
    if is_gitops(doc):
        source, where = _gitops_why(doc)
        dirs = _checkout_dirs(doc)
        fix = (
            "lint what it deploys: kvlint check " + " ".join(shell_word(d) for d in dirs)
            if dirs
            else "lint what it deploys: a chart or directory in this checkout with kvlint check DIR (--helm-values "
            "FILE --helm-set KEY=VALUE for the values and parameters set here), a remote chart rendered with "
            "helm template RELEASE CHART -f FILE | kvlint check -"
        )
        return Finding(
            "KV503",
            f"kvlint does not read this {doc.kind}'s engine settings: {source}",
            loc or where or loc_of(doc.data, "spec") or doc.loc,
            fix=fix,
            severity="info",
            mark=Mark.SETTINGS_NOT_READ,
        )
    why = _UNREAD.get(doc.kind)
    if why is None:  # most kinds: the apiVersion is not looked at
        return None
    api = str(get_in(doc.data, "apiVersion") or "")
    if doc.kind == "Service" and "llmaz" not in api:
        return None
    if not api.startswith(_UNREAD_GROUPS.get(doc.kind, "")):
        return None
    return _operator_note(doc, why, loc)


def _operator_note(doc: Document, why: str, loc: Loc | None) -> Finding:
    """The KV503 note on ``doc``, an object whose operator builds the serving pods from settings kvlint does not
    read (``why``), at ``loc`` (else its ``spec``); counted as not read (:attr:`Mark.SETTINGS_NOT_READ`)."""
    return Finding(
        "KV503",
        f"kvlint does not read this {doc.kind}'s engine settings: {why}",
        loc or loc_of(doc.data, "spec") or doc.loc,
        fix="lint the pods the operator creates (kubectl get pod -o yaml | kvlint check -), or check the engine "
        "command separately with kvlint plan -- <command>",
        severity="info",
        mark=Mark.SETTINGS_NOT_READ,
    )
