"""The webhook Helm chart's match file (``deploy/helm/kvlint-webhook/webhook-match.yaml``), rendered from the kinds
table (:data:`kvlint.kinds.WORKLOAD_KINDS`): which chart webhook sends each reviewed kind, and what its GPU condition
looks for. Kept apart from :mod:`kvlint.kinds` because it reads the workload readers' PodSpec paths
(:data:`kvlint.workloads.find.POD_TEMPLATE_PATHS`), which import the loader, which reads the kinds table."""

from __future__ import annotations

from kvlint.gpu_resources import GPU_RESOURCES, MIG_RESOURCE_PREFIX
from kvlint.kinds import WORKLOAD_KINDS, WorkloadKind

#: The chart's webhooks by the CEL path of the pod spec they test (``kvlint.gpuCondition``): the built-in
#: kinds at their fixed PodSpec paths (:data:`kvlint.workloads.find.POD_TEMPLATE_PATHS`) share a webhook per
#: path; the operator kinds go to ``operators`` or ``cluster-operators`` by scope.
CHART_SHAPES: dict[tuple[str, ...], str] = {
    ("spec", "template", "spec"): "templates",
    ("spec", "jobTemplate", "spec", "template", "spec"): "cronjobs",
    ("spec",): "pods",
    ("template", "spec"): "podtemplates",
}

#: The most words of a container's ``command`` or ``args``, or entries of its ``env``, the chart's CEL condition
#: reads; a longer list is sent
#: without being read. The API server gives all of a webhook's matchConditions 2,500,000 units of CEL cost per
#: request (k8s.io/apiserver ``pkg/apis/cel/config.go``, ``RuntimeCELCostBudgetMatchConditions``) and applies
#: ``failurePolicy`` when they run out (``Ignore``: the object is admitted unsent), so no list may be read whole:
#: 3 MiB of one-letter words is some 750,000 of them. Real engine commands hold a few dozen words.
MAX_COMMAND_WORDS = 64

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
    looks for in the resource limits and image of a container or a sidecar init container; ``engineCommandWords``
    (:data:`kvlint.engines.command.ENGINE_COMMAND_WORDS`), what it looks for in their command, args and env values
    (which a ``$(VAR)`` in the command, or a script's ``$VAR``, expands to: kvlint reads the command so), so that an
    engine started by its command under an image of another name (``python:3.11`` running ``vllm serve``) with no
    GPU request is sent too; ``maxCommandWords``, past which a command, args or env list is sent unread (the CEL
    cost of reading it stays bounded)."""
    from kvlint.engines.command import ENGINE_COMMAND_WORDS
    from kvlint.engines.images import ENGINE_IMAGE_WORDS

    lines = [
        "# Written by tools/gen_webhook_kinds.py from kvlint (WORKLOAD_KINDS in kvlint/kinds.py, the accelerator",
        "# resources and engine image names it reads): do not edit (a test keeps it equal). The kinds the webhook",
        "# reviews: the chart's rules send them (each to the webhook its shape names) and its owner filter exempts",
        "# the objects they control. A built-in kind's pod is sent when a container's, or a sidecar init container's",
        "# (restartPolicy: Always), limits name an accelerator resource (a prefix below, or */gpu), its resources",
        "# claim a Dynamic Resource Allocation device, its image holds an engine's name, or a word of its command",
        "# or args, or of an env value it may expand, holds an engine's program or module name (a list longer than",
        "# maxCommandWords is sent unread).",
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
    lines.append("engineCommandWords: [" + ", ".join(ENGINE_COMMAND_WORDS) + "]")
    lines.append(f"maxCommandWords: {MAX_COMMAND_WORDS}")
    return "\n".join(lines) + "\n"
