"""Stage 2 of the pipeline: find the PodSpecs (workloads) in loaded documents.

``find_workloads`` returns one :class:`~kvlint.types.Workload` per PodSpec:

* Known kinds, at their fixed paths: ``Pod`` (``spec``), ``PodTemplate`` (``template.spec``),
  ``Deployment``/``StatefulSet``/``DaemonSet``/``ReplicaSet``/``ReplicationController``/``Job``
  (``spec.template.spec``), ``CronJob`` (``spec.jobTemplate.spec.template.spec``) and ``LeaderWorkerSet``
  (``spec.leaderWorkerTemplate.leaderTemplate.spec`` with ``role="leader"`` and
  ``...workerTemplate.spec`` with ``role="worker"``; ``group_size`` from ``leaderWorkerTemplate.size``,
  ``replicas`` = ``spec.replicas``, the number of groups). When ``leaderTemplate`` is absent LWS runs the
  worker template for the leader too; that template is then reported once, as ``role="worker"``.
* Every other kind (KServe ``ServingRuntime``/``LLMInferenceService``, Ray ``RayService``/``RayCluster``,
  ``JobSet``, OpenShift ``Template``, operator CRDs...), and known kinds whose fixed path holds nothing, are
  searched structurally: a mapping with a ``containers`` list holding a mapping with ``image`` or ``name``
  is a PodSpec. The search does not look inside ``containers``/``initContainers``/``volumes`` of a PodSpec
  it found, but does look at its other keys, so a nested PodSpec (KServe ``workerSpec``) is its own
  workload and nothing is counted twice.
* Container-like objects that are not in a ``containers`` list become a Workload whose ``pod_spec`` is a
  *synthetic* :class:`~kvlint.source.LDict`: the enclosing mapping's other keys (``nodeSelector``,
  ``tolerations``, ``volumes``... with their locations) plus ``containers: [that mapping]``. The container
  mapping itself is the loaded object, so every position inside it is real; the synthetic ``containers``
  list is located at the container mapping and ``pod_spec.loc`` at the enclosing mapping. Two cases:
  KServe ``InferenceService`` ``spec.predictor.model`` (and the older per-framework keys such as
  ``spec.predictor.huggingface``; path ``spec.predictor.model``) and OME ``runner`` mappings
  (``spec.engineConfig.runner``, ``...leader.runner``; path ``spec.engineConfig.runner``).

For structurally found PodSpecs: ``replicas`` is the nearest enclosing int ``replicas`` (a Ray worker
group's, a DisaggregatedSet role's, the object's ``spec.replicas``); ``group_size`` the nearest enclosing
``leaderWorkerTemplate.size``; ``role`` the nearest enclosing ``leaderTemplate``/``leader`` (leader),
``workerTemplate``/``workerSpec``/``workerGroupSpecs``/``worker`` (worker) or ``headGroupSpec`` (head)
— kvlint's extension of the LeaderWorkerSet roles to the other multi-pod shapes.

Objects built from several documents are joined first (:mod:`.find`): a KServe ``LLMInferenceService`` with its
``LLMInferenceServiceConfig`` presets (:mod:`.llmisvc`), an ``InferenceService`` with its ``ServingRuntime``
(:mod:`.kserve`); the presets and runtimes they use are not linted again on their own. Operator kinds with their
own pod shapes have their modules (:mod:`.kaito`, :mod:`.kubeai`, :mod:`.nim`, :mod:`.production_stack`,
:mod:`.rbg`, :mod:`.operators`); values for vLLM's production-stack Helm chart (a document without a kind)
become the engine Deployments the chart renders (:mod:`.stack_values`). A workload carries ``findings`` about the object itself (a template to render,
:mod:`.placeholders`; a runtime or preset not among the inputs; settings kvlint does not read) and, for a worker
template, its ``leader``.

Labels and annotations are the object's ``metadata`` merged with the pod template's (the ``metadata``
next to the PodSpec's ``spec`` key; KServe predictor ``labels``/``annotations``), template winning.
Odd shapes (``containers`` not a list, ``metadata`` a string, ...) are skipped; nothing here raises.
"""

from kvlint.workloads.base import object_ref
from kvlint.workloads.configmaps import configmaps, mounted_file, mounted_file_mode
from kvlint.workloads.find import POD_TEMPLATE_PATHS, find_workloads
from kvlint.workloads.gitops_walk import gitops_deployed
from kvlint.workloads.kaito import kaito_gpu_memory_utilization

__all__ = [
    "POD_TEMPLATE_PATHS",
    "configmaps",
    "find_workloads",
    "gitops_deployed",
    "kaito_gpu_memory_utilization",
    "mounted_file",
    "mounted_file_mode",
    "object_ref",
]
