"""The Kubernetes kinds ``kvlint check`` reads pods from, and whether the admission webhook reviews each.

One table, :data:`WORKLOAD_KINDS`, is the source of truth for both shells:

* the CLI (:mod:`kvlint.workloads`) reads a pod template from every kind listed here: the built-in workload
  kinds at their fixed paths, the operator kinds with their own readers (:data:`kvlint.workloads.find`'s
  dispatch on ``(group, kind)``), and the operator kinds found in public manifests whose pod templates the
  structural search reads (any other kind is searched too, so ``kvlint check`` also reads kinds not listed);
* the webhook reviews the kinds marked ``reviewed`` (:data:`kvlint.webhook.review.REVIEWED_KINDS`), and an
  object whose controlling owner is one of them is not reviewed again (kvlint reviewed the owner);
* the webhook's Helm chart sends exactly those: its ``webhook-match.yaml`` is written from this table by
  ``python tools/gen_webhook_kinds.py`` (``--check`` to test), and ``deploy/webhook/kvlint-webhook.yaml`` is
  the chart rendered with helm; tests keep the three equal and fail when a kind the workload readers name is
  missing here.

A kind that is read but not reviewed says why (``why_not``, listed in ``docs/webhook.md``): it does not run
anything itself, and reviewing it would also exempt the objects its controller creates, which are the ones
that carry the engine command kvlint can check.

Resources and scopes are those of each kind's CustomResourceDefinition (``spec.names.plural``,
``spec.scope``) in the operator's repository, or of the Kubernetes API for the built-in kinds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from kvlint.gpu_resources import GPU_RESOURCES, MIG_RESOURCE_PREFIX

__all__ = ["SERVED_VERSIONS", "WORKLOAD_KINDS", "WorkloadKind", "reviewed_kinds", "reviewed_versions"]


@dataclass(frozen=True)
class WorkloadKind:
    """One kind ``kvlint check`` reads a pod template from.

    Attributes:
        group: the API group (``""`` for the core group), as in ``apiVersion`` before the ``/``.
        kind: the object's ``kind``.
        resource: the API resource (plural, lower case) a webhook rule names.
        scope: ``Namespaced`` or ``Cluster``, the resource's scope.
        operator: who defines the kind (``Kubernetes``, ``KServe``, ``AIBrix``...), for the documentation.
        why_not: empty when the webhook reviews the kind; else why it does not.
        pod_path: for an operator kind whose one PodSpec is at a fixed path, that path (a key of
            :data:`CHART_SHAPES`): the chart sends the kind through the built-in kinds' webhook of that path,
            whose GPU condition keeps objects that run no engine and request no accelerator from kvlint;
            empty for the others (sent whatever they run).
        versions: the API versions the kind is served in (:data:`SERVED_VERSIONS`): an owner reference
            exempts an object only when its ``apiVersion`` names one of them; empty for a kind not reviewed.
    """

    group: str
    kind: str
    resource: str
    scope: Literal["Namespaced", "Cluster"]
    operator: str
    why_not: str = ""
    pod_path: tuple[str, ...] = ()
    versions: tuple[str, ...] = ()

    @property
    def reviewed(self) -> bool:
        """Whether the admission webhook reviews objects of this kind (and exempts those they control)."""
        return not self.why_not


#: The API versions each reviewed kind is served in, ``(group, kind) -> versions`` (``(group, "*")``: every
#: reviewed kind of the group), read in each CustomResourceDefinition's ``spec.versions`` (``served: true``)
#: at the commit the owner chains table of docs/webhook.md cites, or in the Kubernetes API for the built-in
#: kinds. The webhook exempts an object controlled by a reviewed owner only when the owner reference's
#: ``apiVersion`` names one of these: Kubernetes' garbage collector cannot resolve an owner of a version the
#: cluster does not serve (``apps/v999``), so it neither deletes nor frees such an object, and a forged
#: reference of that kind needed no existing owner to be exempt. A version left out makes the objects its
#: owners control reviewed again (a controller writes its owner references with the version it was built
#: against, one of these).
SERVED_VERSIONS: dict[tuple[str, str], tuple[str, ...]] = {
    # Kubernetes 1.28+ (the chart's minimum): core v1; apps/v1beta1 and v1beta2 were removed in 1.16,
    # batch/v1beta1 CronJob in 1.25
    ("", "*"): ("v1",),
    ("apps", "*"): ("v1",),
    ("batch", "*"): ("v1",),
    # kubernetes-sigs/lws@060ab4da config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml and
    # disaggregatedset.x-k8s.io_disaggregatedsets.yaml
    ("leaderworkerset.x-k8s.io", "*"): ("v1",),
    ("disaggregatedset.x-k8s.io", "*"): ("v1",),
    # kubernetes-sigs/jobset@08dfbdfd config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml
    ("jobset.x-k8s.io", "*"): ("v1alpha2",),
    # kserve/kserve@aaac4e29 charts/kserve-crd/templates/serving.kserve.io_*.yaml,
    # config/crd/full/llmisvc/serving.kserve.io_llminferenceservice{s,configs}.yaml
    ("serving.kserve.io", "InferenceService"): ("v1beta1",),
    ("serving.kserve.io", "ServingRuntime"): ("v1alpha1",),
    ("serving.kserve.io", "ClusterServingRuntime"): ("v1alpha1",),
    ("serving.kserve.io", "LLMInferenceService"): ("v1alpha1", "v1alpha2"),
    ("serving.kserve.io", "LLMInferenceServiceConfig"): ("v1alpha1", "v1alpha2"),
    # knative/serving@98e5ef90 config/core/300-resources/{service,configuration,revision}.yaml
    ("serving.knative.dev", "*"): ("v1",),
    # ray-project/kuberay@feeaf72f ray-operator/config/crd/bases/ray.io_ray{clusters,jobs,services}.yaml
    ("ray.io", "*"): ("v1", "v1alpha1"),
    # kubeai-project/kubeai@f442a2cd manifests/crds/kubeai.org_models.yaml
    ("kubeai.org", "*"): ("v1",),
    # kaito-project/kaito@056b8280 config/crd/bases/kaito.sh_{workspaces,inferencesets}.yaml
    ("kaito.sh", "*"): ("v1alpha1", "v1beta1"),
    # vllm-project/production-stack@a6c01db0 operator/config/crd/bases/production-stack.vllm.ai_vllmruntimes.yaml
    ("production-stack.vllm.ai", "*"): ("v1alpha1",),
    # NVIDIA/k8s-nim-operator@f63f74d7 config/crd/bases/apps.nvidia.com_nim{services,pipelines}.yaml
    ("apps.nvidia.com", "*"): ("v1alpha1",),
    # sgl-project/ome@17b77eda config/crd/full/ome.io_*.yaml
    ("ome.io", "*"): ("v1beta1",),
    # sgl-project/rbg@993491fb config/crd/bases/workloads.x-k8s.io_*.yaml: the group kinds in both, the
    # instance kinds in v1alpha2 only
    ("workloads.x-k8s.io", "RoleBasedGroupSet"): ("v1alpha1", "v1alpha2"),
    ("workloads.x-k8s.io", "RoleBasedGroup"): ("v1alpha1", "v1alpha2"),
    ("workloads.x-k8s.io", "RoleInstanceSet"): ("v1alpha2",),
    ("workloads.x-k8s.io", "RoleInstance"): ("v1alpha2",),
    # volcano-sh/kthena@3cc05728 charts/kthena/charts/workload/crds/workload.serving.volcano.sh_modelservings.yaml
    ("workload.serving.volcano.sh", "*"): ("v1alpha1",),
    # vllm-project/aibrix@e3e10f9e config/crd/orchestration/orchestration.aibrix.ai_*.yaml
    ("orchestration.aibrix.ai", "*"): ("v1alpha1",),
    # ai-dynamo/dynamo deploy/operator/api/v1alpha1 and v1beta1 (v1beta1 the conversion hub, hub.go), the
    # types of config/crd/bases/nvidia.com_dynamo{graph,component}deployments.yaml (read in the API packages,
    # not in the CRD files, too large to fetch here)
    ("nvidia.com", "*"): ("v1alpha1", "v1beta1"),
    # ai-dynamo/grove@fcc3b3bb operator/api/core/v1alpha1/crds/grove.io_podclique*.yaml
    ("grove.io", "*"): ("v1alpha1",),
    # aws/sagemaker-hyperpod-cli helm_chart/HyperPodHelmChart/charts/inference-operator/config/crd/
    # inference.sagemaker.aws.amazon.com_inferenceendpointconfigs.yaml: v1alpha1 at 0139e198; the later
    # releases' samples (config/samples/v1_*.yaml) are v1
    ("inference.sagemaker.aws.amazon.com", "*"): ("v1", "v1alpha1"),
}


def _k(
    group: str,
    kind: str,
    resource: str,
    operator: str,
    *,
    cluster: bool = False,
    why_not: str = "",
    pod_path: tuple[str, ...] = (),
) -> WorkloadKind:
    versions = () if why_not else SERVED_VERSIONS.get((group, kind), SERVED_VERSIONS.get((group, "*"), ()))
    assert versions or why_not, f"no served versions for {group}/{kind}"
    return WorkloadKind(
        group, kind, resource, "Cluster" if cluster else "Namespaced", operator, why_not, pod_path, versions
    )


#: Every kind ``kvlint check`` reads pods from (see the module docstring), in the order the webhook's rules
#: and owner filter list them.
WORKLOAD_KINDS: tuple[WorkloadKind, ...] = (
    _k("", "Pod", "pods", "Kubernetes"),
    _k("", "PodTemplate", "podtemplates", "Kubernetes"),
    _k("", "ReplicationController", "replicationcontrollers", "Kubernetes"),
    _k("apps", "Deployment", "deployments", "Kubernetes"),
    _k("apps", "StatefulSet", "statefulsets", "Kubernetes"),
    _k("apps", "DaemonSet", "daemonsets", "Kubernetes"),
    _k("apps", "ReplicaSet", "replicasets", "Kubernetes"),
    _k("batch", "Job", "jobs", "Kubernetes"),
    _k("batch", "CronJob", "cronjobs", "Kubernetes"),
    _k("leaderworkerset.x-k8s.io", "LeaderWorkerSet", "leaderworkersets", "LeaderWorkerSet"),
    _k("jobset.x-k8s.io", "JobSet", "jobsets", "JobSet"),
    _k("serving.kserve.io", "InferenceService", "inferenceservices", "KServe"),
    _k("serving.kserve.io", "ServingRuntime", "servingruntimes", "KServe"),
    _k("serving.kserve.io", "ClusterServingRuntime", "clusterservingruntimes", "KServe", cluster=True),
    _k("serving.kserve.io", "LLMInferenceService", "llminferenceservices", "KServe (llm-d)"),
    _k("serving.kserve.io", "LLMInferenceServiceConfig", "llminferenceserviceconfigs", "KServe (llm-d)"),
    # Knative Serving (knative/serving): a Service creates a Configuration, the Configuration a Revision per
    # change, the Revision a Deployment, each the controlling owner of the next (service/resources
    # MakeConfigurationFromExisting, configuration/resources MakeRevision, revision/resources MakeDeployment).
    # KServe's serverless mode creates the Service for an InferenceService (reviewed, so the Service is exempt);
    # each can also be written by hand, and reading spec.template.spec (spec for a Revision, whose RevisionSpec
    # inlines a PodSpec) reviews it; without them the Deployment a Revision controls was reviewed again, with
    # Knative's queue-proxy beside the engine, and a denial stopped Knative's rollout half way. Their pod spec
    # is at a fixed path, so the chart sends them only when it requests an accelerator or runs an engine
    # image (most Knative Services are not LLM servers); a Revision's spec is immutable (knative/serving
    # pkg/apis/serving/v1/revision_validation.go Revision.Validate), so its CREATE is the one review, as for a Pod
    _k(
        "serving.knative.dev", "Service", "services", "Knative Serving", pod_path=("spec", "template", "spec")
    ),
    _k(
        "serving.knative.dev",
        "Configuration",
        "configurations",
        "Knative Serving",
        pod_path=("spec", "template", "spec"),
    ),
    _k("serving.knative.dev", "Revision", "revisions", "Knative Serving", pod_path=("spec",)),
    _k("ray.io", "RayService", "rayservices", "KubeRay"),
    _k("ray.io", "RayCluster", "rayclusters", "KubeRay"),
    _k("ray.io", "RayJob", "rayjobs", "KubeRay"),
    _k("kubeai.org", "Model", "models", "KubeAI"),
    _k("kaito.sh", "Workspace", "workspaces", "KAITO"),
    _k("kaito.sh", "InferenceSet", "inferencesets", "KAITO"),
    _k("production-stack.vllm.ai", "VLLMRuntime", "vllmruntimes", "vLLM production-stack"),
    _k("apps.nvidia.com", "NIMService", "nimservices", "NVIDIA NIM Operator"),
    # a NIMPipeline holds NIMService specs and creates those NIMServices, itself the controlling owner
    # (NVIDIA/k8s-nim-operator internal/controller/nimpipeline_controller.go reconcileNIMService; CRD
    # apps.nvidia.com_nimpipelines: Namespaced): reviewed, so that they are exempt (they were reviewed instead)
    _k("apps.nvidia.com", "NIMPipeline", "nimpipelines", "NVIDIA NIM Operator"),
    _k("ome.io", "InferenceService", "inferenceservices", "OME"),
    _k("ome.io", "ServingRuntime", "servingruntimes", "OME"),
    _k("ome.io", "ClusterServingRuntime", "clusterservingruntimes", "OME", cluster=True),
    _k("disaggregatedset.x-k8s.io", "DisaggregatedSet", "disaggregatedsets", "DisaggregatedSet"),
    # RBG (sgl-project/rbg): a RoleBasedGroupSet creates RoleBasedGroups (internal/controller/workloads
    # rolebasedgroupset_controller.go RoleBasedGroupSetReconciler.scaleUp); a RoleBasedGroup a Deployment,
    # StatefulSet, LeaderWorkerSet or RoleInstanceSet per role (pkg/reconciler *_reconciler.go
    # construct*ApplyConfiguration); a RoleInstanceSet RoleInstances (pkg/reconciler/roleinstanceset
    # statelessmode/core newVersionedInstances, statefulmode newVersionedInstance), a RoleInstance its Pods
    # (pkg/reconciler/roleinstance/core commonControl.NewUpdatePods), each the creator's controller reference
    # (CRDs config/crd/bases: Namespaced). Without the set and instance kinds the Pods a RoleInstance controls
    # were reviewed again, and a RoleBasedGroupSet, which holds a whole RoleBasedGroup, was not sent
    _k("workloads.x-k8s.io", "RoleBasedGroupSet", "rolebasedgroupsets", "RBG"),
    _k("workloads.x-k8s.io", "RoleBasedGroup", "rolebasedgroups", "RBG"),
    _k("workloads.x-k8s.io", "RoleInstanceSet", "roleinstancesets", "RBG"),
    _k("workloads.x-k8s.io", "RoleInstance", "roleinstances", "RBG"),
    _k("workload.serving.volcano.sh", "ModelServing", "modelservings", "Kthena"),
    _k("orchestration.aibrix.ai", "RayClusterFleet", "rayclusterfleets", "AIBrix"),
    _k("orchestration.aibrix.ai", "StormService", "stormservices", "AIBrix"),
    # a StormService's roles run as RoleSets its controller creates (exempt then); a RoleSet can also be
    # applied on its own (vllm-project/aibrix config/samples/orchestration_v1alpha1_roleset.yaml;
    # config/crd/orchestration/orchestration.aibrix.ai_rolesets.yaml: plural rolesets, Namespaced)
    _k("orchestration.aibrix.ai", "RoleSet", "rolesets", "AIBrix"),
    # what AIBrix's controllers create under those, as a ReplicaSet under a Deployment: a RayClusterFleet's
    # RayClusterReplicaSets, whose RayClusters they control (pkg/controller/rayclusterreplicaset
    # constructRayCluster), and a RoleSet's PodSets (multi-pod roles), whose Pods they control
    # (pkg/controller/podset createPodFromTemplate); without them those RayClusters and Pods, copies of an
    # object already reviewed, were reviewed again and an operator's write could be denied
    _k("orchestration.aibrix.ai", "RayClusterReplicaSet", "rayclusterreplicasets", "AIBrix"),
    _k("orchestration.aibrix.ai", "PodSet", "podsets", "AIBrix"),
    _k("nvidia.com", "DynamoGraphDeployment", "dynamographdeployments", "NVIDIA Dynamo"),
    # a DynamoGraphDeployment's controller creates one DynamoComponentDeployment per component (or, with Grove,
    # one PodCliqueSet), and a DynamoComponentDeployment's a Deployment or a LeaderWorkerSet, each with the
    # creator as controlling owner (ai-dynamo/dynamo deploy/operator/internal/controller: the component and
    # Grove workload reconcilers, dynamocomponentdeployment_controller.go, through controller_common
    # SyncResource); a DynamoComponentDeployment can also be applied on its own (plural
    # dynamocomponentdeployments, Namespaced)
    _k("nvidia.com", "DynamoComponentDeployment", "dynamocomponentdeployments", "NVIDIA Dynamo"),
    # Grove (ai-dynamo/grove, operator/api/core/v1alpha1/crds): a PodCliqueSet creates PodCliques and
    # PodCliqueScalingGroups, a PodCliqueScalingGroup PodCliques, a PodClique its Pods, each the controlling
    # owner (operator/internal/controller/*/components). A PodCliqueScalingGroup holds no pod template (its
    # PodCliques copy the PodCliqueSet's): reviewed so that those PodCliques are exempt; Grove reconciles a
    # PodClique or PodCliqueScalingGroup only when a PodCliqueSet or PodCliqueScalingGroup owns it
    # (register.go predicates), so one written by hand without such an owner runs nothing
    _k("grove.io", "PodCliqueSet", "podcliquesets", "Grove"),
    _k("grove.io", "PodCliqueScalingGroup", "podcliquescalinggroups", "Grove"),
    _k("grove.io", "PodClique", "podcliques", "Grove"),
    _k(
        "inference.sagemaker.aws.amazon.com",
        "InferenceEndpointConfig",
        "inferenceendpointconfigs",
        "SageMaker HyperPod",
    ),
    # read, not reviewed:
    _k(
        "kaito.sh",
        "MultiRoleInference",
        "multiroleinferences",
        "KAITO",
        why_not="it holds no pod template (kvlint only notes that KAITO builds the pods from its presets); "
        "KAITO's controller creates one InferenceSet per role with the MultiRoleInference as controlling "
        "owner (kaito-project/kaito, the MultiRoleInference controller's reconcileInferenceSet), and those "
        "InferenceSets, which kvlint reads, are reviewed only when their owner is not",
    ),
    _k(
        "workload.serving.volcano.sh",
        "ModelBooster",
        "modelboosters",
        "Kthena",
        why_not="it holds no pod template: kvlint check restates the engine pods of the ModelServing Kthena "
        "generates from it; Kthena's model-booster controller creates that ModelServing with the ModelBooster "
        "as controlling owner (volcano-sh/kthena pkg/model-booster-controller/convert/model_serving.go "
        "BuildModelServing), and the ModelServing, which holds the full command, is reviewed",
    ),
    _k(
        "inference.llmaz.io",
        "Playground",
        "playgrounds",
        "llmaz",
        why_not="its engine command comes from an llmaz BackendRuntime installed with llmaz; llmaz creates an "
        "inference Service and then LeaderWorkerSets holding the full command, which are reviewed",
    ),
    _k(
        "inference.llmaz.io",
        "Service",
        "services",
        "llmaz",
        why_not="its engine command comes from an llmaz BackendRuntime installed with llmaz; llmaz creates "
        "LeaderWorkerSets holding the full command, which are reviewed",
    ),
    _k(
        "argoproj.io",
        "Application",
        "applications",
        "Argo CD",
        why_not="it holds no pod template (kvlint check reads the inline values of a chart it has a reader for and renders a chart of the same checkout; the webhook does neither): Argo CD "
        "renders its source, a Helm chart or a directory of manifests, and applies the objects, which are reviewed",
    ),
    _k(
        "argoproj.io",
        "ApplicationSet",
        "applicationsets",
        "Argo CD",
        why_not="it holds no pod template (kvlint check reads the inline values of a chart it has a reader for and renders a chart of the same checkout; the webhook does neither): Argo CD "
        "generates Applications from it, whose rendered objects are applied and reviewed",
    ),
    _k(
        "helm.toolkit.fluxcd.io",
        "HelmRelease",
        "helmreleases",
        "Flux",
        why_not="it holds no pod template (kvlint check reads the inline values of a chart it has a reader for and renders a chart of the same checkout; the webhook does neither): Flux's "
        "helm-controller renders the chart with its values and applies the objects, which are reviewed",
    ),
    _k(
        "helm.fluxcd.io",
        "HelmRelease",
        "helmreleases",
        "Flux Helm Operator",
        why_not="it holds no pod template (kvlint check reads the inline values of a chart it has a reader for and renders a chart of the same checkout; the webhook does neither): the Helm "
        "Operator renders the chart with its values and applies the objects, which are reviewed",
    ),
    _k(
        "kro.run",
        "ResourceGraphDefinition",
        "resourcegraphdefinitions",
        "kro",
        why_not="a ResourceGraphDefinition runs nothing: its resources are templates with ${...} CEL expressions that kro's "
        "controller fills in for each instance of the API it defines, and the objects it then applies are reviewed",
    ),
    _k(
        "template.openshift.io",
        "Template",
        "templates",
        "OpenShift",
        why_not="a Template runs nothing: oc process turns it into objects, and those objects are reviewed",
    ),
)


def reviewed_versions() -> dict[tuple[str, str], tuple[str, ...]]:
    """``(group, kind) -> served versions`` (:data:`SERVED_VERSIONS`) of the kinds the webhook reviews."""
    return {(k.group, k.kind): k.versions for k in WORKLOAD_KINDS if k.reviewed}


def reviewed_kinds() -> dict[tuple[str, str], tuple[str, str]]:
    """``(group, kind) -> (resource, scope)`` of the kinds the webhook reviews, in :data:`WORKLOAD_KINDS`
    order."""
    return {(k.group, k.kind): (k.resource, k.scope) for k in WORKLOAD_KINDS if k.reviewed}


#: The chart's webhooks by the CEL path of the pod spec they test (``kvlint.gpuCondition``): the built-in
#: kinds at their fixed PodSpec paths (:data:`kvlint.workloads.find.POD_TEMPLATE_PATHS`) share a webhook per
#: path; the operator kinds go to ``operators`` or ``cluster-operators`` by scope.
CHART_SHAPES: dict[tuple[str, ...], str] = {
    ("spec", "template", "spec"): "templates",
    ("spec", "jobTemplate", "spec", "template", "spec"): "cronjobs",
    ("spec",): "pods",
    ("template", "spec"): "podtemplates",
}

#: Where the Helm chart reads what it sends to the webhook (relative to the repository root).
CHART_MATCH_FILE = "deploy/helm/kvlint-webhook/webhook-match.yaml"

#: Resource name prefixes of the chart's GPU condition written by hand, kept as they were: any NVIDIA, AMD
#: or Intel GPU resource (MIG slices, shared GPUs); ``*/gpu`` is tested apart.
_VENDOR_PREFIXES = ("nvidia.com/", "amd.com/", "gpu.intel.com/")


def chart_shape(k: WorkloadKind) -> str:
    """The chart webhook (``.name`` in ``validatingwebhookconfiguration.yaml``) that sends kind ``k``."""
    from kvlint.workloads.find import POD_TEMPLATE_PATHS

    path = POD_TEMPLATE_PATHS.get(k.kind) if k.operator == "Kubernetes" else (k.pod_path or None)
    if path is not None:
        return CHART_SHAPES[path]
    return "operators" if k.scope == "Namespaced" else "cluster-operators"


def accelerator_resource_prefixes() -> list[str]:
    """Prefixes one of which begins every container resource kvlint counts as an accelerator
    (:data:`kvlint.gpu_resources.GPU_RESOURCES`, MIG slices), for the chart's GPU condition: the
    vendor prefixes, then each other resource not ending in ``/gpu`` (``google.com/tpu``,
    ``habana.ai/gaudi``, ``aws.amazon.com/neuron`` for its three Neuron resources)."""
    out = list(_VENDOR_PREFIXES)
    for r in (*GPU_RESOURCES, MIG_RESOURCE_PREFIX):
        if not r.endswith("/gpu") and not any(r.startswith(p) for p in out):
            out.append(r)
    return [p for p in out if not any(o != p and p.startswith(o) for o in out)]


def render_chart_match() -> str:
    """The text of the chart's ``webhook-match.yaml`` (:data:`CHART_MATCH_FILE`): ``kinds``, one flow mapping
    per reviewed kind (``group``, ``kind``, ``resource``, ``scope``, ``shape``, ``versions``) in :data:`WORKLOAD_KINDS`
    order; ``acceleratorResources`` (:func:`accelerator_resource_prefixes`) and ``engineImageWords``
    (:data:`kvlint.engines.images.ENGINE_IMAGE_WORDS`), what the GPU condition of the built-in kinds' webhooks
    looks for in the resource limits and image of a container or a sidecar init container."""
    from kvlint.engines.images import ENGINE_IMAGE_WORDS

    lines = [
        "# Written by tools/gen_webhook_kinds.py from kvlint (WORKLOAD_KINDS in kvlint/kinds.py, the accelerator",
        "# resources and engine image names it reads): do not edit (a test keeps it equal). The kinds the webhook",
        "# reviews: the chart's rules send them (each to the webhook its shape names) and its owner filter exempts",
        "# the objects they control. A built-in kind's pod is sent when a container's, or a sidecar init container's",
        "# (restartPolicy: Always), limits name an accelerator resource (a prefix below, or */gpu), its resources",
        "# claim a Dynamic Resource Allocation device, or its image holds an engine's name.",
        "kinds:",
    ]
    for k in WORKLOAD_KINDS:
        if k.reviewed:
            group = k.group or '""'
            lines.append(
                f"  - {{group: {group}, kind: {k.kind}, resource: {k.resource}, scope: {k.scope}, "
                f"shape: {chart_shape(k)}, versions: [{', '.join(k.versions)}]}}"
            )
    lines.append("acceleratorResources: [" + ", ".join(accelerator_resource_prefixes()) + "]")
    lines.append("engineImageWords: [" + ", ".join(ENGINE_IMAGE_WORDS) + "]")
    return "\n".join(lines) + "\n"
